package bolt_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// metaOf returns meta/schema and meta/needs of the closed file at path.
func metaOf(t *testing.T, path string) (schema, needs string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		schema, needs = string(meta.Get([]byte("schema"))), string(meta.Get([]byte("needs")))
		return nil
	})
	return schema, needs
}

// olderFile writes a database with one inbox entry, then makes it look like format: "1"
// drops meta/needs, "" drops meta/schema too (format 0).
func olderFile(t *testing.T, format string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reef.db")
	s := open(t, path)
	if err := s.Update(func(tx persistence.Tx) error {
		_, err := tx.AppendInbox("agent:main:x", messages.Inbound{Text: "kept"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		if err := meta.Delete([]byte("needs")); err != nil {
			return err
		}
		if format == "" {
			return meta.Delete([]byte("schema"))
		}
		return meta.Put([]byte("schema"), []byte(format))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenUpgradesAnOlderFormatAfterTheBackup(t *testing.T) {
	for _, tc := range []struct {
		schema string
		from   int
	}{{"1", 1}, {"", 0}} {
		t.Run("format"+tc.schema, func(t *testing.T) {
			path := olderFile(t, tc.schema)
			var backup bytes.Buffer
			calls := 0
			s, err := bolt.Open(path, bolt.Options{BeforeUpgrade: func(from int, write func(io.Writer) error) error {
				calls++
				if from != tc.from {
					t.Errorf("BeforeUpgrade from = %d; want %d", from, tc.from)
				}
				return write(&backup)
			}})
			if err != nil {
				t.Fatal(err)
			}
			var inbox []persistence.InboxItem
			s.View(func(r persistence.Reader) error {
				inbox, err = r.Inbox("agent:main:x")
				return err
			})
			s.Close()
			if calls != 1 || len(inbox) != 1 || inbox[0].Text != "kept" {
				t.Errorf("BeforeUpgrade called %d times, inbox %+v; want once and the entry kept", calls, inbox)
			}
			if schema, needs := metaOf(t, path); schema != "2" || needs != persistence.FormatRelease[2] {
				t.Errorf("after the upgrade meta = %q, %q; want \"2\", %q", schema, needs, persistence.FormatRelease[2])
			}
			// The backup is the file as it was, in its old format.
			old := filepath.Join(t.TempDir(), "backup.db")
			if err := os.WriteFile(old, backup.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			if schema, _ := metaOf(t, old); schema != tc.schema {
				t.Errorf("backup's meta/schema = %q; want %q", schema, tc.schema)
			}
			// A second open finds nothing to upgrade.
			s2, err := bolt.Open(path, bolt.Options{BeforeUpgrade: func(int, func(io.Writer) error) error {
				t.Error("BeforeUpgrade called on a file in the current format")
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			s2.Close()
		})
	}
}

func TestOpenChangesNothingWhenTheBackupFails(t *testing.T) {
	path := olderFile(t, "1")
	_, err := bolt.Open(path, bolt.Options{BeforeUpgrade: func(int, func(io.Writer) error) error {
		return errors.New("disk full")
	}})
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("Open = %v; want the backup's error, saying nothing was changed", err)
	}
	if schema, needs := metaOf(t, path); schema != "1" || needs != "" {
		t.Errorf("meta after a failed backup = %q, %q; want \"1\", \"\" (untouched)", schema, needs)
	}
}

func TestOpenReadOnlyReadsAnOlderFormatAsItIs(t *testing.T) {
	path := olderFile(t, "1")
	s, err := bolt.Open(path, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var inbox []persistence.InboxItem
	s.View(func(r persistence.Reader) error {
		inbox, err = r.Inbox("agent:main:x")
		return err
	})
	s.Close()
	if len(inbox) != 1 {
		t.Errorf("inbox = %+v; want the entry", inbox)
	}
	if schema, _ := metaOf(t, path); schema != "1" {
		t.Errorf("meta/schema after a read-only open = %q; want \"1\"", schema)
	}
}

func TestOpenRefusesANewerFormatNamingTheRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.db")
	open(t, path).Close()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bbolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		meta.Put([]byte("schema"), []byte("3"))
		return meta.Put([]byte("needs"), []byte("v9.4.0"))
	})
	db.Close()
	for _, ro := range []bool{false, true} {
		_, err := bolt.Open(path, bolt.Options{ReadOnly: ro})
		fe, ok := errors.AsType[*persistence.FormatError](err)
		if !ok {
			t.Fatalf("Open(ReadOnly: %v) = %v; want a *persistence.FormatError", ro, err)
		}
		if fe.Format != 3 || fe.Needs != "v9.4.0" || !strings.Contains(fe.Error(), "needs reef v9.4.0 or later") || !strings.Contains(fe.Error(), path) {
			t.Errorf("Open(ReadOnly: %v) = %q (%+v); want format 3, needing reef v9.4.0, naming %s", ro, fe, fe, path)
		}
	}
	if schema, _ := metaOf(t, path); schema != "3" {
		t.Errorf("meta/schema = %q after a refused open; want \"3\"", schema)
	}
}
