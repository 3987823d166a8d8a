package bolt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// setSchema rewrites meta/schema of the file at path with raw bbolt.
func setSchema(t *testing.T, path, version string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte(version))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenWritesLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.db")
	s := open(t, path)
	err := s.Update(func(tx persistence.Tx) error {
		_, err := tx.AppendInbox("agent:main:x", messages.Inbound{Text: "x"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		if got := string(tx.Bucket([]byte("meta")).Get([]byte("schema"))); got != "2" {
			t.Errorf("meta/schema = %q; want \"2\"", got)
		}
		if got, want := string(tx.Bucket([]byte("meta")).Get([]byte("needs"))), persistence.FormatRelease[2]; got != want {
			t.Errorf("meta/needs = %q; want %q", got, want)
		}
		if tx.Bucket([]byte("dedup")) == nil {
			t.Errorf("no dedup bucket")
		}
		inbox := tx.Bucket([]byte("sessions")).Bucket([]byte("agent:main:x")).Bucket([]byte("inbox"))
		if inbox == nil {
			t.Fatalf("no sessions/agent:main:x/inbox bucket")
		}
		if k, _ := inbox.Cursor().First(); string(k) != "\x00\x00\x00\x00\x00\x00\x00\x01" {
			t.Errorf("first inbox key = %q; want 8-byte big-endian 1", k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesOtherSchemas(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"3", "store format 3"},
		{"0", "unreadable"},
		{"banana", "unreadable"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reef.db")
			s := open(t, path)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			setSchema(t, path, tc.version)
			s2, err := bolt.Open(path, bolt.Options{})
			if err == nil {
				_ = s2.Close()
				t.Fatalf("Open with schema %q succeeded", tc.version)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open with schema %q = %q; want it to say %q and name the path", tc.version, err, tc.want)
			}
			// The refused open released the file.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			open(t, path)
		})
	}
}

func TestOpenRefusesGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := bolt.Open(path, bolt.Options{})
	if err == nil || errors.Is(err, persistence.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(garbage) = %v; want an error naming the path", err)
	}
}
