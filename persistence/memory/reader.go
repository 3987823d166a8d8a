package memory

import (
	"fmt"
	"slices"
	"sort"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// session is everything stored under one session key.
type session struct {
	info   *persistence.SessionInfo // nil until PutSession
	msgs   seqMap[messages.ChatMessage]
	snaps  map[uint64]persistence.Snapshot
	inbox  seqMap[messages.Inbound]
	outbox seqMap[messages.Outbound]
}

func newSession() *session {
	return &session{
		msgs:   seqMap[messages.ChatMessage]{m: map[uint64]messages.ChatMessage{}},
		snaps:  map[uint64]persistence.Snapshot{},
		inbox:  seqMap[messages.Inbound]{m: map[uint64]messages.Inbound{}},
		outbox: seqMap[messages.Outbound]{m: map[uint64]messages.Outbound{}},
	}
}

// seqMap is one sub-bucket: values by seq and the last seq handed out.
type seqMap[T any] struct {
	last uint64
	m    map[uint64]T
}

// after returns the seqs greater than after, ascending.
func (sm *seqMap[T]) after(after uint64) []uint64 {
	var seqs []uint64
	for seq := range sm.m {
		if seq > after {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs
}

func cloneMessage(m messages.ChatMessage) messages.ChatMessage {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	m.Media = slices.Clone(m.Media)
	return m
}

func cloneInbound(in messages.Inbound) messages.Inbound {
	in.Attachment = slices.Clone(in.Attachment)
	in.Media = slices.Clone(in.Media)
	return in
}

// reader implements persistence.Reader; the caller holds the store's lock.
type reader struct {
	s    *Store
	done bool
}

var _ persistence.Reader = (*reader)(nil)

func (r *reader) check(op string) error {
	if r.done {
		return fmt.Errorf("memory: %s: transaction has ended: %w", op, persistence.ErrClosed)
	}
	return nil
}

// Session returns the info of a session and whether it exists.
func (r *reader) Session(key string) (persistence.SessionInfo, bool, error) {
	if err := r.check("session"); err != nil {
		return persistence.SessionInfo{}, false, err
	}
	if ss := r.s.sessions[key]; ss != nil && ss.info != nil {
		return *ss.info, true, nil
	}
	return persistence.SessionInfo{}, false, nil
}

// Sessions lists every session that has info, ordered by key.
func (r *reader) Sessions() ([]persistence.SessionInfo, error) {
	if err := r.check("sessions"); err != nil {
		return nil, err
	}
	var out []persistence.SessionInfo
	for _, key := range r.keys() {
		if info := r.s.sessions[key].info; info != nil {
			out = append(out, *info)
		}
	}
	return out, nil
}

// keys returns every session key in byte order (bbolt's cursor order).
func (r *reader) keys() []string {
	keys := make([]string, 0, len(r.s.sessions))
	for k := range r.s.sessions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Messages returns transcript entries with seq > after, in order.
func (r *reader) Messages(key string, after uint64) ([]persistence.Entry, error) {
	if err := r.check("messages"); err != nil {
		return nil, err
	}
	ss := r.s.sessions[key]
	if ss == nil {
		return nil, nil
	}
	var out []persistence.Entry
	for _, seq := range ss.msgs.after(after) {
		out = append(out, persistence.Entry{Seq: seq, ChatMessage: cloneMessage(ss.msgs.m[seq])})
	}
	return out, nil
}

// LatestSnapshot returns the snapshot with the highest seq.
func (r *reader) LatestSnapshot(key string) (persistence.Snapshot, bool, error) {
	if err := r.check("latest snapshot"); err != nil {
		return persistence.Snapshot{}, false, err
	}
	ss := r.s.sessions[key]
	if ss == nil || len(ss.snaps) == 0 {
		return persistence.Snapshot{}, false, nil
	}
	var best uint64
	found := false
	for seq := range ss.snaps {
		if !found || seq > best {
			best, found = seq, true
		}
	}
	return ss.snaps[best], true, nil
}

// Snapshots returns every snapshot of a session, ordered by seq.
func (r *reader) Snapshots(key string) ([]persistence.Snapshot, error) {
	if err := r.check("snapshots"); err != nil {
		return nil, err
	}
	ss := r.s.sessions[key]
	if ss == nil {
		return nil, nil
	}
	seqs := make([]uint64, 0, len(ss.snaps))
	for seq := range ss.snaps {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	out := make([]persistence.Snapshot, 0, len(seqs))
	for _, seq := range seqs {
		out = append(out, ss.snaps[seq])
	}
	return out, nil
}

// Inbox returns the session's inbox, in order.
func (r *reader) Inbox(key string) ([]persistence.InboxItem, error) {
	if err := r.check("inbox"); err != nil {
		return nil, err
	}
	ss := r.s.sessions[key]
	if ss == nil {
		return nil, nil
	}
	var out []persistence.InboxItem
	for _, seq := range ss.inbox.after(0) {
		out = append(out, persistence.InboxItem{Seq: seq, Inbound: cloneInbound(ss.inbox.m[seq])})
	}
	return out, nil
}

// Outbox returns the session's outbox, in order.
func (r *reader) Outbox(key string) ([]persistence.OutboxItem, error) {
	if err := r.check("outbox"); err != nil {
		return nil, err
	}
	ss := r.s.sessions[key]
	if ss == nil {
		return nil, nil
	}
	var out []persistence.OutboxItem
	for _, seq := range ss.outbox.after(0) {
		out = append(out, persistence.OutboxItem{Seq: seq, Outbound: ss.outbox.m[seq]})
	}
	return out, nil
}

// PendingSessions lists, ordered by key, the sessions with a non-empty inbox or outbox.
func (r *reader) PendingSessions() ([]string, error) {
	if err := r.check("pending sessions"); err != nil {
		return nil, err
	}
	var out []string
	for _, key := range r.keys() {
		if ss := r.s.sessions[key]; len(ss.inbox.m) > 0 || len(ss.outbox.m) > 0 {
			out = append(out, key)
		}
	}
	return out, nil
}

// Seen reports whether a dedup id was recorded.
func (r *reader) Seen(id string) (bool, error) {
	if err := r.check("seen"); err != nil {
		return false, err
	}
	_, ok := r.s.dedup[id]
	return ok, nil
}
