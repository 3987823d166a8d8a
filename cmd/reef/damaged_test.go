package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers/fake"
)

// TestDamagedDatabase is issue #20's finding 9 through the binary: with a truncated or
// garbled reef.db, `reef chat` and `reef gateway` exit non-zero with a message that says
// what is wrong and what to do, without a goroutine dump and without changing the file;
// `reef doctor` reports it; `reef doctor --repair` keeps the damaged file and leaves a
// database reef runs on, holding the conversations that could be read.
func TestDamagedDatabase(t *testing.T) {
	for _, tt := range []struct {
		name string
		hurt func(t *testing.T, path string)
	}{
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, usedSize(t, path)/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbled", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(bytes.Repeat([]byte("\xde\xad\xbe\xef garbage "), 3*4096/14), 3*4096); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			llm := newFake(t, fake.Reply{Text: "hello again"})
			home := newHome(t)
			e := withFake(home, llm)
			db := filepath.Join(home, "data", "reef.db")
			fillConversations(t, db, 30)
			tt.hurt(t, db)
			before, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			unchanged := func(after string) {
				t.Helper()
				if now, err := os.ReadFile(db); err != nil || !bytes.Equal(now, before) {
					t.Fatalf("%s changed the damaged file (%v)", after, err)
				}
			}

			for _, args := range [][]string{{"chat"}, {"gateway"}, {"sessions", "list"}} {
				res := reef(t, e, "hi\n", args...)
				cmd := "reef " + strings.Join(args, " ")
				if res.code == 0 || !strings.Contains(res.stderr, "the database "+db+" is damaged") ||
					!strings.Contains(res.stderr, "reef doctor --repair") {
					t.Errorf("%s = %d, want a failure that says the database is damaged and how to repair it\nstdout:\n%s\nstderr:\n%s",
						cmd, res.code, res.stdout, res.stderr)
				}
				if out := res.stdout + res.stderr; strings.Contains(out, "goroutine ") || strings.Contains(out, "panic") {
					t.Errorf("%s printed a crash:\n%s", cmd, out)
				}
				unchanged(cmd)
			}

			doc := reef(t, e, "", "doctor")
			if doc.code == 0 || !strings.Contains(doc.stdout, "✗ database: damaged") || !strings.Contains(doc.stdout, "reef doctor --repair") {
				t.Errorf("reef doctor = %d, want it to report the damage\n%s%s", doc.code, doc.stdout, doc.stderr)
			}
			unchanged("reef doctor")

			rep := reef(t, e, "", "doctor", "--repair")
			if !strings.Contains(rep.stdout, "✓ database: repaired") {
				t.Fatalf("reef doctor --repair = %d\n%s%s", rep.code, rep.stdout, rep.stderr)
			}
			kept, _ := filepath.Glob(db + ".corrupt-*")
			if len(kept) != 1 {
				t.Fatalf("kept files %v, want one reef.db.corrupt-<time>", kept)
			}
			if b, err := os.ReadFile(kept[0]); err != nil || !bytes.Equal(b, before) {
				t.Errorf("the kept file is not the damaged file as it was (%v)", err)
			}
			if !strings.Contains(rep.stdout, kept[0]) {
				t.Errorf("reef doctor --repair does not say where the damaged file is:\n%s", rep.stdout)
			}

			list := reef(t, e, "", "sessions", "list")
			if list.code != 0 {
				t.Fatalf("reef sessions list after the repair = %d\n%s%s", list.code, list.stdout, list.stderr)
			}
			if !strings.Contains(list.stdout, "agent:main:telegram:direct:") {
				t.Errorf("no conversation survived the repair:\n%s", list.stdout)
			}
			chat := reef(t, e, "hi\n", "chat")
			if chat.code != 0 || !strings.Contains(chat.stdout, "hello again") {
				t.Errorf("reef chat after the repair = %d\n%s%s", chat.code, chat.stdout, chat.stderr)
			}
			if again := reef(t, e, "", "doctor", "--repair"); !strings.Contains(again.stdout, "nothing to repair") {
				t.Errorf("a second reef doctor --repair:\n%s", again.stdout)
			}
		})
	}
}

// fillConversations writes n conversations of 20 entries each into a new database at path.
func fillConversations(t *testing.T, path string, n int) {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		key := fmt.Sprintf("agent:main:telegram:direct:%d", 1000+i)
		if err := s.Update(func(tx persistence.Tx) error {
			if err := tx.PutSession(persistence.SessionInfo{Key: key, AgentID: "main", Channel: "telegram", ChatID: fmt.Sprint(1000 + i)}); err != nil {
				return err
			}
			for j := range 20 {
				m := messages.ChatMessage{Role: messages.RoleUser, Content: fmt.Sprintf("message %d: %s", j, strings.Repeat("words ", 60))}
				if _, err := tx.AppendMessages(key, m); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// usedSize is the part of the database file bbolt has written pages to: the file runs on
// past it, unwritten, since bbolt grows it ahead of need, so cutting the file's length in
// half may cut only the unused tail.
func usedSize(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	db.View(func(tx *bbolt.Tx) error { n = tx.Size(); return nil })
	return n
}
