package bolt_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

func openReadOnly(t *testing.T, path string) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{ReadOnly: true, LockTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open read-only: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestReadOnlySharesTheFileWithReadersOnly: readers see what a writer committed, several may
// hold the file at once, none may write, and a writer cannot open it while they do.
func TestReadOnlySharesTheFileWithReadersOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.db")
	w := open(t, path)
	if err := w.Update(func(tx persistence.Tx) error {
		return tx.PutSession(persistence.SessionInfo{Key: "k", AgentID: "main"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := openReadOnly(t, path), openReadOnly(t, path)
	for i, r := range []*bolt.Store{r1, r2} {
		err := r.View(func(rd persistence.Reader) error {
			info, ok, err := rd.Session("k")
			if !ok || info.AgentID != "main" {
				t.Errorf("reader %d: Session(k) = %+v, %v; want the stored info", i, info, ok)
			}
			return err
		})
		if err != nil {
			t.Errorf("reader %d: View: %v", i, err)
		}
	}
	if err := r1.Update(func(tx persistence.Tx) error { return tx.PutSession(persistence.SessionInfo{Key: "x"}) }); err == nil {
		t.Error("Update on a read-only store succeeded")
	}
	if s, err := bolt.Open(path, bolt.Options{LockTimeout: 50 * time.Millisecond}); !errors.Is(err, persistence.ErrLocked) {
		if err == nil {
			s.Close()
		}
		t.Errorf("writer Open beside readers = %v; want persistence.ErrLocked", err)
	}
	r1.Close()
	r2.Close()
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("read-only use changed the file")
	}
}

func TestReadOnlyCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "reef.db")
	_, err := bolt.Open(path, bolt.Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open of a missing file = %v; want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open created the directory (stat: %v)", err)
	}
}

func TestReadOnlyChecksSchema(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	open(t, newer).Close()
	setSchema(t, newer, "3")
	foreign := filepath.Join(dir, "foreign.db")
	db, err := bbolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for path, want := range map[string]string{newer: "store format 3", foreign: "not a reef database"} {
		s, err := bolt.Open(path, bolt.Options{ReadOnly: true})
		if err == nil {
			s.Close()
			t.Errorf("read-only Open(%s) succeeded", filepath.Base(path))
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("read-only Open(%s) = %v; want it to say %q", filepath.Base(path), err, want)
		}
	}
}
