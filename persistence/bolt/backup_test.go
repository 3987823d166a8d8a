package bolt

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// TestOpenRefusesEmptyFile: an existing zero-length reef.db is not silently made a new
// database (its history would be "gone" without a word); a missing one is.
func TestOpenRefusesEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reef.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		st, err := Open(path, Options{ReadOnly: ro})
		if !errors.Is(err, ErrEmpty) {
			if st != nil {
				st.Close()
			}
			t.Fatalf("Open(empty, ReadOnly=%v) = %v, want ErrEmpty", ro, err)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty file was changed: %v, %v", fi, err)
	}
	st, err := Open(filepath.Join(dir, "new.db"), Options{})
	if err != nil {
		t.Fatalf("Open(missing) = %v, want a new database", err)
	}
	st.Close()
	st, err = Open(filepath.Join(dir, "new.db"), Options{}) // and it opens again
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}

// TestBackup: Backup's copy opens read-only, passes Check and holds what was committed.
func TestBackup(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(filepath.Join(dir, "reef.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Update(func(tx persistence.Tx) error {
		_, err := tx.AppendMessages("s1", messages.ChatMessage{Role: "user", Content: "remember me"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := st.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy.db")
	if err := os.WriteFile(copyPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := Open(copyPath, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := cp.Check(); err != nil {
		t.Fatalf("Check(copy) = %v", err)
	}
	var got []persistence.Entry
	if err := cp.View(func(r persistence.Reader) error {
		got, err = r.Messages("s1", 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Content != "remember me" {
		t.Fatalf("copy holds %+v, want the one message", got)
	}
}

// TestRestore: a good copy replaces the database, which is kept beside it; a damaged copy and
// a locked database are refused, changing nothing.
func TestRestore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reef.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := st.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "copy.db")
	if err := os.WriteFile(src, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(path, src, time.Now()); !errors.Is(err, persistence.ErrLocked) {
		t.Fatalf("Restore while the database is open = %v, want ErrLocked", err)
	}
	st.Close()

	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, buf.Bytes()[:len(buf.Bytes())/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(path, bad, time.Now()); !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("Restore(truncated copy) = %v, want ErrCorrupt", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is gone after a refused restore: %v", err)
	}

	kept, err := Restore(path, src, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept); err != nil || filepath.Dir(kept) != dir {
		t.Fatalf("kept %q: %v", kept, err)
	}
	if _, err := os.Stat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the copy is still at %s: %v", src, err)
	}
	st, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}
