package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// rollbackKeys and rollbackIDs are what the rollback tests compare before and after.
var (
	rollbackKeys = []string{"a", "b", "new"}
	rollbackIDs  = []string{"old", "recent", "fresh"}
)

// seedRollback writes the state the rollback tests try to change.
func seedRollback(t *testing.T, s persistence.Store) {
	update(t, s, func(tx persistence.Tx) error {
		fill(t, tx, "a")
		fill(t, tx, "b")
		_, err := tx.MarkSeen("old", base)
		must(t, err)
		_, err = tx.MarkSeen("recent", base.Add(2*time.Hour))
		return err
	})
}

// writes lists one of each kind of write, each changing the seeded state.
var writes = []struct {
	name string
	fn   func(tx persistence.Tx) error
}{
	{"PutSession replace", func(tx persistence.Tx) error {
		in := info("a")
		in.Turns = 99
		return tx.PutSession(in)
	}},
	{"PutSession new", func(tx persistence.Tx) error { return tx.PutSession(info("new")) }},
	{"AppendMessages", func(tx persistence.Tx) error {
		_, err := tx.AppendMessages("a", msg(messages.RoleUser, "x"), msg(messages.RoleUser, "y"))
		return err
	}},
	{"AppendMessages new session", func(tx persistence.Tx) error {
		_, err := tx.AppendMessages("new", msg(messages.RoleUser, "x"))
		return err
	}},
	{"PutSnapshot", func(tx persistence.Tx) error {
		return tx.PutSnapshot("a", persistence.Snapshot{Seq: 2, Summary: "newer"})
	}},
	{"PutSnapshot replace", func(tx persistence.Tx) error {
		return tx.PutSnapshot("a", persistence.Snapshot{Seq: 1, Summary: "replaced"})
	}},
	{"AppendInbox", func(tx persistence.Tx) error { _, err := tx.AppendInbox("a", inbound("z")); return err }},
	{"AppendInbox new session", func(tx persistence.Tx) error { _, err := tx.AppendInbox("new", inbound("z")); return err }},
	{"DeleteInbox", func(tx persistence.Tx) error { return tx.DeleteInbox("a", 1) }},
	{"AppendOutbox", func(tx persistence.Tx) error { _, err := tx.AppendOutbox("a", outbound("z")); return err }},
	{"DeleteOutbox", func(tx persistence.Tx) error { return tx.DeleteOutbox("a", 2) }},
	{"MarkSeen", func(tx persistence.Tx) error { _, err := tx.MarkSeen("fresh", base); return err }},
	{"PruneSeen", func(tx persistence.Tx) error { _, _, err := tx.PruneSeen(base.Add(time.Hour), "", 0); return err }},
	{"DeleteSession", func(tx persistence.Tx) error { return tx.DeleteSession("b") }},
	{"DeleteSession and re-create", func(tx persistence.Tx) error {
		if err := tx.DeleteSession("a"); err != nil {
			return err
		}
		_, err := tx.AppendMessages("a", msg(messages.RoleUser, "reborn"))
		return err
	}},
}

func testRollbackEachWrite(t *testing.T, s persistence.Store) {
	seedRollback(t, s)
	before := dump(t, s, rollbackKeys, rollbackIDs)
	for _, w := range writes {
		var inside state
		err := s.Update(func(tx persistence.Tx) error {
			if err := w.fn(tx); err != nil {
				return err
			}
			inside = state{Keys: map[string]sessionState{}, Seen: map[string]bool{}}
			must(t, readState(tx, rollbackKeys, rollbackIDs, &inside))
			return errAbort
		})
		if !errors.Is(err, errAbort) {
			t.Fatalf("%s: Update = %v; want fn's error", w.name, err)
		}
		if diff(before, inside) == "" {
			t.Errorf("%s: the write was not visible inside its own transaction", w.name)
		}
		if d := diff(before, dump(t, s, rollbackKeys, rollbackIDs)); d != "" {
			t.Errorf("%s: failed Update kept writes (-before +after):\n%s", w.name, d)
		}
	}
	checkSeqsRolledBack(t, s)
}

func testRollbackAllWrites(t *testing.T, s persistence.Store) {
	seedRollback(t, s)
	before := dump(t, s, rollbackKeys, rollbackIDs)
	err := s.Update(func(tx persistence.Tx) error {
		for _, w := range writes {
			must(t, w.fn(tx))
		}
		return errAbort
	})
	if !errors.Is(err, errAbort) {
		t.Fatalf("Update = %v; want fn's error", err)
	}
	if d := diff(before, dump(t, s, rollbackKeys, rollbackIDs)); d != "" {
		t.Errorf("failed Update kept writes (-before +after):\n%s", d)
	}
	checkSeqsRolledBack(t, s)
}

func testRollbackOnPanic(t *testing.T, s persistence.Store) {
	seedRollback(t, s)
	before := dump(t, s, rollbackKeys, rollbackIDs)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v; want the panic to reach the caller", r)
			}
		}()
		_ = s.Update(func(tx persistence.Tx) error {
			for _, w := range writes {
				must(t, w.fn(tx))
			}
			panic("boom")
		})
	}()
	if d := diff(before, dump(t, s, rollbackKeys, rollbackIDs)); d != "" {
		t.Errorf("panicking Update kept writes (-before +after):\n%s", d)
	}
	checkSeqsRolledBack(t, s) // and the store still works
}

// checkSeqsRolledBack checks that seqs handed out by failed Updates are given again: the
// seeded session "a" has entries 1-2, inbox 1-2 and outbox 1-2.
func checkSeqsRolledBack(t *testing.T, s persistence.Store) {
	t.Helper()
	update(t, s, func(tx persistence.Tx) error {
		seqs, err := tx.AppendMessages("a", msg(messages.RoleUser, "next"))
		must(t, err)
		in, err := tx.AppendInbox("a", inbound("next"))
		must(t, err)
		out, err := tx.AppendOutbox("a", outbound("next"))
		must(t, err)
		if len(seqs) != 1 || seqs[0] != 3 || in != 3 || out != 3 {
			t.Errorf("next seqs after failed Updates: msgs %v inbox %d outbox %d; want 3, 3, 3", seqs, in, out)
		}
		return nil
	})
}
