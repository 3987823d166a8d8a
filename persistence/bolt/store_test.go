package bolt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/persistence/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store { return open(t, filepath.Join(t.TempDir(), "reef.db")) })
}

// open opens path and closes it when the test ends.
func open(t *testing.T, path string) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpenCreatesDirAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "nested", "reef.db")
	s := open(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q; want %q", s.Path(), path)
	}
	for p, want := range map[string]os.FileMode{filepath.Dir(path): 0o700 | os.ModeDir, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got&^0o022 != want&^0o022 { // the umask may only remove bits
			t.Errorf("mode of %s = %v; want %v", p, got, want)
		}
	}
	if st := s.Stats(); st.FileSize <= 0 {
		t.Errorf("Stats().FileSize = %d; want > 0", st.FileSize)
	}
}

func TestSecondOpenFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.db")
	open(t, path)
	start := time.Now()
	s2, err := bolt.Open(path, bolt.Options{})
	elapsed := time.Since(start)
	if err == nil {
		_ = s2.Close()
		t.Fatal("second Open succeeded; want persistence.ErrLocked")
	}
	if !errors.Is(err, persistence.ErrLocked) {
		t.Errorf("second Open = %v; want persistence.ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the path %s", err, path)
	}
	if elapsed > time.Second {
		t.Errorf("second Open took %v; want well under 1s", elapsed)
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.db")
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx persistence.Tx) error {
		if err := tx.PutSession(persistence.SessionInfo{Key: "k", AgentID: "main"}); err != nil {
			return err
		}
		if _, err := tx.AppendMessages("k", messages.ChatMessage{Role: messages.RoleUser, Content: "kept"}); err != nil {
			return err
		}
		_, err := tx.MarkSeen("telegram:1", time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	err = s.View(func(r persistence.Reader) error {
		in, ok, err := r.Session("k")
		if err != nil || !ok || in.AgentID != "main" {
			t.Errorf("Session(k) after reopen = %+v, %v, %v", in, ok, err)
		}
		msgs, err := r.Messages("k", 0)
		if err != nil || len(msgs) != 1 || msgs[0].Content != "kept" || msgs[0].Seq != 1 {
			t.Errorf("Messages(k) after reopen = %+v, %v", msgs, err)
		}
		if seen, err := r.Seen("telegram:1"); !seen || err != nil {
			t.Errorf("Seen after reopen = %v, %v", seen, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx persistence.Tx) error {
		seqs, err := tx.AppendMessages("k", messages.ChatMessage{Role: messages.RoleAssistant, Content: "next"})
		if err == nil && seqs[0] != 2 {
			t.Errorf("seq after reopen = %d; want 2", seqs[0])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "reef.db"))
	if err := s.Check(); err != nil {
		t.Fatalf("Check on a fresh db: %v", err)
	}
	big := strings.Repeat("x", 64<<10)
	for i := range 20 {
		err := s.Update(func(tx persistence.Tx) error {
			key := "agent:main:telegram:direct:" + string(rune('a'+i%5))
			seqs, err := tx.AppendMessages(key, messages.ChatMessage{Role: messages.RoleUser, Content: big})
			if err != nil {
				return err
			}
			in, err := tx.AppendInbox(key, messages.Inbound{Text: big})
			if err != nil {
				return err
			}
			if err := tx.DeleteInbox(key, in); err != nil {
				return err
			}
			if i%7 == 6 {
				return tx.DeleteSession(key)
			}
			return tx.PutSnapshot(key, persistence.Snapshot{Seq: seqs[0], Summary: big})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Check(); err != nil {
		t.Fatalf("Check on a used db: %v", err)
	}
}
