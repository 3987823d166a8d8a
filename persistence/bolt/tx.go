package bolt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

var (
	keyInfo      = []byte("info")
	bucketMsgs   = []byte("msgs")
	bucketSnaps  = []byte("snaps")
	bucketInbox  = []byte("inbox")
	bucketOutbox = []byte("outbox")
)

var errEmptyKey = errors.New("empty key")

// tx implements persistence.Tx (inside Update) and persistence.Reader (inside View).
// Byte slices bbolt returns are valid only during the transaction: every value is decoded
// (copied) before it is returned.
type tx struct {
	btx  *bbolt.Tx
	done bool
}

var _ persistence.Tx = (*tx)(nil)

func (t *tx) check(op string) error {
	if t.done {
		return fmt.Errorf("bolt: %s: transaction has ended: %w", op, persistence.ErrClosed)
	}
	return nil
}

// session returns the bucket of a session, or nil.
func (t *tx) session(key string) *bbolt.Bucket {
	if key == "" {
		return nil
	}
	return t.btx.Bucket(bucketSessions).Bucket([]byte(key))
}

// sub returns a sub-bucket of a session, or nil.
func (t *tx) sub(key string, name []byte) *bbolt.Bucket {
	if b := t.session(key); b != nil {
		return b.Bucket(name)
	}
	return nil
}

// subForWrite returns a sub-bucket of a session, creating the session's buckets as needed.
func (t *tx) subForWrite(key string, name []byte) (*bbolt.Bucket, error) {
	if key == "" {
		return nil, errEmptyKey
	}
	sb, err := t.btx.Bucket(bucketSessions).CreateBucketIfNotExists([]byte(key))
	if err != nil {
		return nil, err
	}
	return sb.CreateBucketIfNotExists(name)
}

// appendJSON stores v under the bucket's next sequence and returns that sequence.
func appendJSON(b *bbolt.Bucket, v any) (uint64, error) {
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return 0, err
	}
	return seq, b.Put(itob(seq), data)
}

// each decodes every value with key > after into a new T and calls fn with its seq.
func each[T any](b *bbolt.Bucket, after uint64, fn func(seq uint64, v T)) error {
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(itob(after + 1)); k != nil; k, v = c.Next() {
		if v == nil || len(k) != 8 {
			continue
		}
		var rec T
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("seq %d: %w", btoi(k), err)
		}
		fn(btoi(k), rec)
	}
	return nil
}

func itob(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

func btoi(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// Session returns the info of a session and whether it exists.
func (t *tx) Session(key string) (persistence.SessionInfo, bool, error) {
	if err := t.check("session"); err != nil {
		return persistence.SessionInfo{}, false, err
	}
	b := t.session(key)
	if b == nil {
		return persistence.SessionInfo{}, false, nil
	}
	v := b.Get(keyInfo)
	if v == nil {
		return persistence.SessionInfo{}, false, nil
	}
	var info persistence.SessionInfo
	if err := json.Unmarshal(v, &info); err != nil {
		return persistence.SessionInfo{}, false, fmt.Errorf("bolt: session %q: %w", key, err)
	}
	return info, true, nil
}

// Sessions lists every session that has info, ordered by key.
func (t *tx) Sessions() ([]persistence.SessionInfo, error) {
	if err := t.check("sessions"); err != nil {
		return nil, err
	}
	var out []persistence.SessionInfo
	c := t.btx.Bucket(bucketSessions).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil { // not a bucket
			continue
		}
		raw := t.btx.Bucket(bucketSessions).Bucket(k).Get(keyInfo)
		if raw == nil {
			continue
		}
		var info persistence.SessionInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, fmt.Errorf("bolt: sessions: %q: %w", k, err)
		}
		out = append(out, info)
	}
	return out, nil
}

// Messages returns transcript entries with seq > after, in order.
func (t *tx) Messages(key string, after uint64) ([]persistence.Entry, error) {
	if err := t.check("messages"); err != nil {
		return nil, err
	}
	var out []persistence.Entry
	err := each(t.sub(key, bucketMsgs), after, func(seq uint64, m messages.ChatMessage) {
		out = append(out, persistence.Entry{Seq: seq, ChatMessage: m})
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: messages %q: %w", key, err)
	}
	return out, nil
}

// LatestSnapshot returns the snapshot with the highest seq.
func (t *tx) LatestSnapshot(key string) (persistence.Snapshot, bool, error) {
	if err := t.check("latest snapshot"); err != nil {
		return persistence.Snapshot{}, false, err
	}
	b := t.sub(key, bucketSnaps)
	if b == nil {
		return persistence.Snapshot{}, false, nil
	}
	k, v := b.Cursor().Last()
	if k == nil {
		return persistence.Snapshot{}, false, nil
	}
	var snap persistence.Snapshot
	if err := json.Unmarshal(v, &snap); err != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("bolt: latest snapshot %q: %w", key, err)
	}
	snap.Seq = btoi(k)
	return snap, true, nil
}

// Snapshots returns every snapshot of a session, ordered by seq.
func (t *tx) Snapshots(key string) ([]persistence.Snapshot, error) {
	if err := t.check("snapshots"); err != nil {
		return nil, err
	}
	b := t.sub(key, bucketSnaps)
	if b == nil {
		return nil, nil
	}
	var out []persistence.Snapshot
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() { // from seq 0: a reset may cover no entry
		if v == nil || len(k) != 8 {
			continue
		}
		var snap persistence.Snapshot
		if err := json.Unmarshal(v, &snap); err != nil {
			return nil, fmt.Errorf("bolt: snapshots %q: seq %d: %w", key, btoi(k), err)
		}
		snap.Seq = btoi(k)
		out = append(out, snap)
	}
	return out, nil
}

// Inbox returns the session's inbox, in order.
func (t *tx) Inbox(key string) ([]persistence.InboxItem, error) {
	if err := t.check("inbox"); err != nil {
		return nil, err
	}
	var out []persistence.InboxItem
	err := each(t.sub(key, bucketInbox), 0, func(seq uint64, in messages.Inbound) {
		out = append(out, persistence.InboxItem{Seq: seq, Inbound: in})
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: inbox %q: %w", key, err)
	}
	return out, nil
}

// Outbox returns the session's outbox, in order.
func (t *tx) Outbox(key string) ([]persistence.OutboxItem, error) {
	if err := t.check("outbox"); err != nil {
		return nil, err
	}
	var out []persistence.OutboxItem
	err := each(t.sub(key, bucketOutbox), 0, func(seq uint64, o messages.Outbound) {
		out = append(out, persistence.OutboxItem{Seq: seq, Outbound: o})
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: outbox %q: %w", key, err)
	}
	return out, nil
}

// PendingSessions lists, ordered by key, the sessions with a non-empty inbox or outbox.
func (t *tx) PendingSessions() ([]string, error) {
	if err := t.check("pending sessions"); err != nil {
		return nil, err
	}
	var out []string
	sessions := t.btx.Bucket(bucketSessions)
	c := sessions.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			continue
		}
		sb := sessions.Bucket(k)
		if nonEmpty(sb.Bucket(bucketInbox)) || nonEmpty(sb.Bucket(bucketOutbox)) {
			out = append(out, string(k))
		}
	}
	return out, nil
}

func nonEmpty(b *bbolt.Bucket) bool {
	if b == nil {
		return false
	}
	k, _ := b.Cursor().First()
	return k != nil
}

// Seen reports whether a dedup id was recorded.
func (t *tx) Seen(id string) (bool, error) {
	if err := t.check("seen"); err != nil {
		return false, err
	}
	if id == "" {
		return false, nil
	}
	return t.btx.Bucket(bucketDedup).Get([]byte(id)) != nil, nil
}

// dedupTime decodes a dedup value; a malformed one counts as the oldest possible.
func dedupTime(v []byte) int64 {
	if len(v) != 8 {
		return 0
	}
	return int64(btoi(v))
}

// isBefore reports whether a dedup value is older than cutoff.
func isBefore(v []byte, cutoff time.Time) bool {
	return dedupTime(v) < cutoff.UnixNano()
}
