package bolt_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// fill writes n sessions of 20 entries each (a few hundred pages) and closes the store.
func fill(t testing.TB, path string, n int) {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		key := fmt.Sprintf("agent:main:telegram:direct:%d", i)
		if err := s.Update(func(tx persistence.Tx) error {
			if err := tx.PutSession(persistence.SessionInfo{Key: key, AgentID: "main", Channel: "telegram"}); err != nil {
				return err
			}
			for j := range 20 {
				msg := messages.ChatMessage{Role: messages.RoleUser, Content: fmt.Sprintf("message %d of %d: %s", j, i, strings.Repeat("x", 400))}
				if _, err := tx.AppendMessages(key, msg); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// damages are the ways a file gets hurt: cut short, or pages overwritten with junk.
var damages = []struct {
	name string
	hurt func(t *testing.T, path string)
}{
	{"truncated", func(t *testing.T, path string) {
		if err := os.Truncate(path, usedSize(t, path)/2); err != nil {
			t.Fatal(err)
		}
	}},
	{"garbled pages", func(t *testing.T, path string) {
		garble(t, path, 3, 3)
	}},
	{"garbled root", func(t *testing.T, path string) {
		garble(t, path, rootPage(t, path), 1)
	}},
}

// garble writes junk over n pages from page first.
func garble(t *testing.T, path string, first, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0x07, 0xff, 0x13}, n*4096/7+1)[:n*4096]
	if _, err := f.WriteAt(junk, int64(first*4096)); err != nil {
		t.Fatal(err)
	}
}

// rootPage reads the root bucket's page id from the first meta page (offset 16+16).
func rootPage(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root := 0
	for i := 7; i >= 0; i-- {
		root = root<<8 | int(b[32+i])
	}
	return root
}

// TestDamagedFileIsRefusedUntouched is issue #20's finding 9: a truncated or garbled file
// is refused at Open with persistence.ErrCorrupt, in the caller's goroutine (no panic), and
// its bytes are not changed, for writers and readers.
func TestDamagedFileIsRefusedUntouched(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reef.db")
			fill(t, path, 40)
			d.hurt(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{false, true} {
				s, err := bolt.Open(path, bolt.Options{ReadOnly: ro})
				if err == nil {
					s.Close()
					t.Fatalf("Open(ReadOnly: %v) of a damaged file succeeded", ro)
				}
				if !errors.Is(err, persistence.ErrCorrupt) {
					t.Errorf("Open(ReadOnly: %v) = %v, want persistence.ErrCorrupt", ro, err)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("opening the damaged file changed it")
			}
		})
	}
}

// TestRepairCopiesWhatIsReadable: Repair keeps the damaged file byte for byte under a new
// name and leaves a database that opens, passes bbolt's check, and holds the sessions that
// were readable; a healthy file is left alone.
func TestRepairCopiesWhatIsReadable(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reef.db")
			fill(t, path, 40)
			d.hurt(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
			rep, err := bolt.Repair(path, now)
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if rep.Damage == nil || rep.Kept != path+".corrupt-20261126-140000" {
				t.Errorf("report %+v: want the damage and the kept file's name", rep)
			}
			if kept, err := os.ReadFile(rep.Kept); err != nil || !bytes.Equal(kept, before) {
				t.Errorf("the damaged file was not kept as it was (%v)", err)
			}
			s := open(t, path)
			if err := s.Check(); err != nil {
				t.Fatalf("the repaired file fails its check: %v", err)
			}
			var infos []persistence.SessionInfo
			readable := 0
			if err := s.View(func(r persistence.Reader) error {
				var err error
				if infos, err = r.Sessions(); err != nil {
					return err
				}
				for _, in := range infos {
					msgs, err := r.Messages(in.Key, 0)
					if err != nil {
						return err
					}
					if len(msgs) > 0 {
						readable++
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d buckets, %d records copied, %d problems, %d conversations recovered outside the tree; %d sessions, %d with messages",
				d.name, rep.Buckets, rep.Records, rep.Lost, rep.Recovered, len(infos), readable)
			if d.name == "truncated" && rep.Recovered == 0 {
				t.Error("no conversation was recovered from the pages the tree no longer reaches")
			}
			if readable == 0 || rep.Records == 0 {
				t.Errorf("no conversation survived the repair (%d sessions, %d records)", len(infos), rep.Records)
			}
			// The repaired store takes writes, and sequences go on from where they were.
			if err := s.Update(func(tx persistence.Tx) error {
				_, err := tx.AppendMessages("agent:main:telegram:direct:new", messages.ChatMessage{Role: messages.RoleUser, Content: "hi"})
				return err
			}); err != nil {
				t.Errorf("write to the repaired store: %v", err)
			}
		})
	}

	path := filepath.Join(t.TempDir(), "reef.db")
	fill(t, path, 2)
	if _, err := bolt.Repair(path, time.Now()); !errors.Is(err, bolt.ErrNotDamaged) {
		t.Errorf("Repair of a healthy file: %v, want ErrNotDamaged", err)
	}
	if m, _ := filepath.Glob(path + ".*"); len(m) != 0 {
		t.Errorf("Repair of a healthy file left %v", m)
	}
}

// FuzzDamagedOpen: whatever bytes are overwritten in a real file, Open and Repair end with
// an error or a store, never a crash (bbolt faults and asserts on what the walk lets by).
func FuzzDamagedOpen(f *testing.F) {
	base := filepath.Join(f.TempDir(), "base.db")
	fill(f, base, 6)
	good, err := os.ReadFile(base)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(3*4096), []byte("\xde\xad\xbe\xef"))
	f.Add(uint32(4096+16), []byte{0xff, 0xff})
	f.Add(uint32(5*4096+10), []byte{0xff, 0xff, 0, 0})
	f.Fuzz(func(t *testing.T, off uint32, junk []byte) {
		b := bytes.Clone(good)
		copy(b[int(off)%len(b):], junk)
		path := filepath.Join(t.TempDir(), "reef.db")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := bolt.Open(path, bolt.Options{}); err == nil {
			_ = s.View(func(r persistence.Reader) error {
				infos, _ := r.Sessions()
				for _, in := range infos {
					_, _ = r.Messages(in.Key, 0)
				}
				return nil
			})
			s.Close()
			return
		}
		if _, err := bolt.Repair(path, time.Now()); err == nil {
			s, err := bolt.Open(path, bolt.Options{})
			if err != nil {
				t.Fatalf("the repaired file does not open: %v", err)
			}
			s.Close()
		}
	})
}

// usedSize is the part of the database file bbolt has written pages to: the file runs on
// past it, unwritten, since bbolt grows it ahead of need (16 MB at a time once its mapping
// is large), so cutting the file's length in half may cut only the unused tail.
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
