package memory

import (
	"fmt"
	"slices"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// tx implements persistence.Tx: it writes in place and records how to undo each write.
type tx struct {
	reader
	undo []func()
}

var _ persistence.Tx = (*tx)(nil)

// rollback undoes every write, newest first.
func (t *tx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
}

// session returns the session for key, creating it (undoably) if needed.
func (t *tx) session(key string) (*session, error) {
	if key == "" {
		return nil, errEmptyKey
	}
	if ss := t.s.sessions[key]; ss != nil {
		return ss, nil
	}
	ss := newSession()
	t.s.sessions[key] = ss
	t.undo = append(t.undo, func() { delete(t.s.sessions, key) })
	return ss, nil
}

// appendSeq stores v under the next seq of sm and returns that seq.
func appendSeq[T any](t *tx, sm *seqMap[T], v func(seq uint64) T) uint64 {
	sm.last++
	seq := sm.last
	sm.m[seq] = v(seq)
	t.undo = append(t.undo, func() { delete(sm.m, seq); sm.last = seq - 1 })
	return seq
}

// deleteSeq removes seq from sm, undoably.
func deleteSeq[T any](t *tx, sm *seqMap[T], seq uint64) {
	old, ok := sm.m[seq]
	if !ok {
		return
	}
	delete(sm.m, seq)
	t.undo = append(t.undo, func() { sm.m[seq] = old })
}

// PutSession creates or replaces a session's info.
func (t *tx) PutSession(info persistence.SessionInfo) error {
	if err := t.check("put session"); err != nil {
		return err
	}
	ss, err := t.session(info.Key)
	if err != nil {
		return fmt.Errorf("memory: put session %q: %w", info.Key, err)
	}
	old := ss.info
	ss.info = &info
	t.undo = append(t.undo, func() { ss.info = old })
	return nil
}

// AppendMessages appends transcript entries and returns the seq given to each.
func (t *tx) AppendMessages(key string, msgs ...messages.ChatMessage) ([]uint64, error) {
	if err := t.check("append messages"); err != nil {
		return nil, err
	}
	ss, err := t.session(key)
	if err != nil {
		return nil, fmt.Errorf("memory: append messages %q: %w", key, err)
	}
	seqs := make([]uint64, 0, len(msgs))
	for _, m := range msgs {
		seqs = append(seqs, appendSeq(t, &ss.msgs, func(uint64) messages.ChatMessage { return cloneMessage(m) }))
	}
	return seqs, nil
}

// PutSnapshot stores a compaction summary covering every entry with seq <= snap.Seq.
// It refuses a snapshot that claims to cover entries not appended yet.
func (t *tx) PutSnapshot(key string, snap persistence.Snapshot) error {
	if err := t.check("put snapshot"); err != nil {
		return err
	}
	var last uint64
	if ss := t.s.sessions[key]; ss != nil {
		last = ss.msgs.last
	}
	if snap.Seq > last {
		return fmt.Errorf("memory: put snapshot %q: seq %d is past the last entry %d", key, snap.Seq, last)
	}
	ss, err := t.session(key)
	if err != nil {
		return fmt.Errorf("memory: put snapshot %q: %w", key, err)
	}
	old, had := ss.snaps[snap.Seq]
	ss.snaps[snap.Seq] = snap
	t.undo = append(t.undo, func() {
		if had {
			ss.snaps[snap.Seq] = old
		} else {
			delete(ss.snaps, snap.Seq)
		}
	})
	return nil
}

// AppendInbox stores an accepted inbound message and returns its seq. The stored copy has
// SessionKey and InboxSeq set.
func (t *tx) AppendInbox(key string, in messages.Inbound) (uint64, error) {
	if err := t.check("append inbox"); err != nil {
		return 0, err
	}
	ss, err := t.session(key)
	if err != nil {
		return 0, fmt.Errorf("memory: append inbox %q: %w", key, err)
	}
	return appendSeq(t, &ss.inbox, func(seq uint64) messages.Inbound {
		c := cloneInbound(in)
		c.SessionKey, c.InboxSeq = key, seq
		return c
	}), nil
}

// DeleteInbox removes an inbox entry; deleting a missing entry is not an error.
func (t *tx) DeleteInbox(key string, seq uint64) error {
	if err := t.check("delete inbox"); err != nil {
		return err
	}
	if ss := t.s.sessions[key]; ss != nil {
		deleteSeq(t, &ss.inbox, seq)
	}
	return nil
}

// AppendOutbox stores a reply to send and returns its seq. The stored copy has SessionKey
// and OutboxSeq set.
func (t *tx) AppendOutbox(key string, out messages.Outbound) (uint64, error) {
	if err := t.check("append outbox"); err != nil {
		return 0, err
	}
	ss, err := t.session(key)
	if err != nil {
		return 0, fmt.Errorf("memory: append outbox %q: %w", key, err)
	}
	return appendSeq(t, &ss.outbox, func(seq uint64) messages.Outbound {
		out.SessionKey, out.OutboxSeq = key, seq
		return out
	}), nil
}

// DeleteOutbox removes an outbox entry; deleting a missing entry is not an error.
func (t *tx) DeleteOutbox(key string, seq uint64) error {
	if err := t.check("delete outbox"); err != nil {
		return err
	}
	if ss := t.s.sessions[key]; ss != nil {
		deleteSeq(t, &ss.outbox, seq)
	}
	return nil
}

// MarkSeen records a dedup id; it reports false, and keeps the first time, if the id was
// already recorded.
func (t *tx) MarkSeen(id string, at time.Time) (bool, error) {
	if err := t.check("mark seen"); err != nil {
		return false, err
	}
	if id == "" {
		return false, fmt.Errorf("memory: mark seen: %w", errEmptyKey)
	}
	if _, ok := t.s.dedup[id]; ok {
		return false, nil
	}
	t.s.dedup[id] = at.UnixNano()
	t.undo = append(t.undo, func() { delete(t.s.dedup, id) })
	return true, nil
}

// PruneSeen removes dedup ids first seen before cutoff, looking at no more than limit ids
// (all when limit <= 0) from id from on; next is the id to continue from, "" at the end.
func (t *tx) PruneSeen(cutoff time.Time, from string, limit int) (int, string, error) {
	if err := t.check("prune seen"); err != nil {
		return 0, "", err
	}
	ids := make([]string, 0, len(t.s.dedup))
	for id := range t.s.dedup {
		if id >= from {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	next := ""
	if limit > 0 && len(ids) > limit {
		next, ids = ids[limit], ids[:limit]
	}
	n := 0
	for _, id := range ids {
		if at := t.s.dedup[id]; at < cutoff.UnixNano() {
			delete(t.s.dedup, id)
			t.undo = append(t.undo, func() { t.s.dedup[id] = at })
			n++
		}
	}
	return n, next, nil
}

// DeleteSession removes a session and everything under it; a missing session is not an error.
func (t *tx) DeleteSession(key string) error {
	if err := t.check("delete session"); err != nil {
		return err
	}
	old := t.s.sessions[key]
	if old == nil {
		return nil
	}
	delete(t.s.sessions, key)
	t.undo = append(t.undo, func() { t.s.sessions[key] = old })
	return nil
}
