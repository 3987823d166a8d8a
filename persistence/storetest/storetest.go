// Package storetest is the conformance suite every persistence.Store implementation runs,
// so that bolt (production) and memory (tests) keep the same semantics:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) persistence.Store { return memory.New() })
//	}
//
// Beyond the comments on persistence.Store, the suite pins these semantics:
//   - A session exists (Session, Sessions) once PutSession stored its info. Appends and
//     PutSnapshot create a session's storage without info; PendingSessions still lists it.
//   - Seqs are per session and per kind (entries, inbox, outbox): they start at 1, grow by 1
//     per append, are not reused after a delete, and a failed Update gives its seqs out again.
//   - AppendInbox and AppendOutbox store the item with SessionKey and InboxSeq/OutboxSeq set.
//   - PutSnapshot refuses a Seq past the session's last entry; Seq 0 (covering no entry) is
//     allowed. Snapshots lists every snapshot by Seq, Kind included; one per Seq.
//   - MarkSeen keeps the first time; PruneSeen removes ids strictly before the cutoff.
//   - Deleting a missing entry or session is not an error; an empty session key or dedup id is.
//   - A failed or panicking Update keeps nothing, and fn sees its own writes before that.
//   - A Tx or Reader used after its Update or View, and a closed Store, fail with
//     persistence.ErrClosed; Close may be called twice.
package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Run runs the suite. open must return a fresh, empty store for each subtest; Run closes it
// when the subtest ends, so Close must tolerate being called twice.
func Run(t *testing.T, open func(t *testing.T) persistence.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s persistence.Store)
	}{
		{"Sessions", testSessions},
		{"Messages", testMessages},
		{"Snapshots", testSnapshots},
		{"SnapshotList", testSnapshotList},
		{"Inbox", testInbox},
		{"Outbox", testOutbox},
		{"PendingSessions", testPendingSessions},
		{"Dedup", testDedup},
		{"DeleteSession", testDeleteSession},
		{"RollbackEachWrite", testRollbackEachWrite},
		{"RollbackAllWrites", testRollbackAllWrites},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"ViewSeesCommitted", testViewSeesCommitted},
		{"ReturnsCopies", testReturnsCopies},
		{"StoresCopies", testStoresCopies},
		{"OddKeys", testOddKeys},
		{"EmptyKeys", testEmptyKeys},
		{"LargeValues", testLargeValues},
		{"ConcurrentViews", testConcurrentViews},
		{"TxAfterEnd", testTxAfterEnd},
		{"Closed", testClosed},
		{"NamedBuckets", testNamedBuckets},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

// errAbort is what failing Updates return.
var errAbort = errors.New("storetest: abort")

// base is a fixed time so tests are deterministic.
var base = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// update runs fn in an Update and fails the test if it errors.
func update(t *testing.T, s persistence.Store, fn func(tx persistence.Tx) error) {
	t.Helper()
	if err := s.Update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// view runs fn in a View and fails the test if it errors.
func view(t *testing.T, s persistence.Store, fn func(r persistence.Reader) error) {
	t.Helper()
	if err := s.View(fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// diff compares with go-cmp, treating nil and empty slices alike.
func diff(want, got any) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

func msg(role messages.Role, content string) messages.ChatMessage {
	return messages.ChatMessage{Role: role, Content: content, Time: base}
}

func info(key string) persistence.SessionInfo {
	return persistence.SessionInfo{
		Key: key, AgentID: "main", Channel: "telegram", Account: "default", ChatID: "42",
		Created: base, Updated: base.Add(time.Minute), Turns: 3,
		Usage: messages.Usage{InputTokens: 100, OutputTokens: 20},
	}
}

func inbound(text string) messages.Inbound {
	return messages.Inbound{
		Channel: "telegram", ChatID: "42", ChatType: messages.ChatDirect, SenderID: "7",
		SenderName: "Ada", MessageID: "m-" + text, Text: text, Time: base,
		Attachment: []string{"inbox/" + text + ".png"},
	}
}

func outbound(text string) messages.Outbound {
	return messages.Outbound{Channel: "telegram", ChatID: "42", ReplyToID: "m1", Text: text}
}

// state is everything a store holds about some session keys and dedup ids.
type state struct {
	Sessions []persistence.SessionInfo
	Pending  []string
	Keys     map[string]sessionState
	Seen     map[string]bool
}

type sessionState struct {
	Info      persistence.SessionInfo
	Exists    bool
	Messages  []persistence.Entry
	Snapshot  persistence.Snapshot
	HasSnap   bool
	Snapshots []persistence.Snapshot
	Inbox     []persistence.InboxItem
	Outbox    []persistence.OutboxItem
}

// dump reads the whole state of keys and ids in one View. It returns a deep copy made
// through JSON, so that a store wrongly sharing memory with what it returns cannot change
// an earlier dump too and hide the fault.
func dump(t *testing.T, s persistence.Store, keys, ids []string) state {
	t.Helper()
	st := state{Keys: map[string]sessionState{}, Seen: map[string]bool{}}
	view(t, s, func(r persistence.Reader) error {
		return readState(r, keys, ids, &st)
	})
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	var out state
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("dump: %v", err)
	}
	return out
}

func readState(r persistence.Reader, keys, ids []string, st *state) error {
	var err error
	if st.Sessions, err = r.Sessions(); err != nil {
		return err
	}
	if st.Pending, err = r.PendingSessions(); err != nil {
		return err
	}
	for _, k := range keys {
		var ss sessionState
		if ss.Info, ss.Exists, err = r.Session(k); err != nil {
			return err
		}
		if ss.Messages, err = r.Messages(k, 0); err != nil {
			return err
		}
		if ss.Snapshot, ss.HasSnap, err = r.LatestSnapshot(k); err != nil {
			return err
		}
		if ss.Snapshots, err = r.Snapshots(k); err != nil {
			return err
		}
		if ss.Inbox, err = r.Inbox(k); err != nil {
			return err
		}
		if ss.Outbox, err = r.Outbox(k); err != nil {
			return err
		}
		st.Keys[k] = ss
	}
	for _, id := range ids {
		if st.Seen[id], err = r.Seen(id); err != nil {
			return err
		}
	}
	return nil
}

// must fails the test on err; for use inside Update and View callbacks.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
