package bolt

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// PutSession creates or replaces a session's info.
func (t *tx) PutSession(info persistence.SessionInfo) error {
	if err := t.check("put session"); err != nil {
		return err
	}
	if err := t.putSession(info); err != nil {
		return fmt.Errorf("bolt: put session %q: %w", info.Key, err)
	}
	return nil
}

func (t *tx) putSession(info persistence.SessionInfo) error {
	if info.Key == "" {
		return errEmptyKey
	}
	sb, err := t.btx.Bucket(bucketSessions).CreateBucketIfNotExists([]byte(info.Key))
	if err != nil {
		return err
	}
	data, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return sb.Put(keyInfo, data)
}

// AppendMessages appends transcript entries and returns the seq given to each.
func (t *tx) AppendMessages(key string, msgs ...messages.ChatMessage) ([]uint64, error) {
	if err := t.check("append messages"); err != nil {
		return nil, err
	}
	b, err := t.subForWrite(key, bucketMsgs)
	if err != nil {
		return nil, fmt.Errorf("bolt: append messages %q: %w", key, err)
	}
	seqs := make([]uint64, 0, len(msgs))
	for _, m := range msgs {
		seq, err := appendJSON(b, m)
		if err != nil {
			return nil, fmt.Errorf("bolt: append messages %q: %w", key, err)
		}
		seqs = append(seqs, seq)
	}
	return seqs, nil
}

// PutSnapshot stores a compaction summary covering every entry with seq <= snap.Seq.
// It refuses a snapshot that claims to cover entries not appended yet.
func (t *tx) PutSnapshot(key string, snap persistence.Snapshot) error {
	if err := t.check("put snapshot"); err != nil {
		return err
	}
	if err := t.putSnapshot(key, snap); err != nil {
		return fmt.Errorf("bolt: put snapshot %q: %w", key, err)
	}
	return nil
}

func (t *tx) putSnapshot(key string, snap persistence.Snapshot) error {
	var last uint64
	if msgs := t.sub(key, bucketMsgs); msgs != nil {
		last = msgs.Sequence()
	}
	if snap.Seq > last {
		return fmt.Errorf("seq %d is past the last entry %d", snap.Seq, last)
	}
	b, err := t.subForWrite(key, bucketSnaps)
	if err != nil {
		return err
	}
	data, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	return b.Put(itob(snap.Seq), data)
}

// AppendInbox stores an accepted inbound message and returns its seq. The stored copy has
// SessionKey and InboxSeq set.
func (t *tx) AppendInbox(key string, in messages.Inbound) (uint64, error) {
	if err := t.check("append inbox"); err != nil {
		return 0, err
	}
	b, err := t.subForWrite(key, bucketInbox)
	if err != nil {
		return 0, fmt.Errorf("bolt: append inbox %q: %w", key, err)
	}
	in.SessionKey, in.InboxSeq = key, b.Sequence()+1
	seq, err := appendJSON(b, in)
	if err != nil {
		return 0, fmt.Errorf("bolt: append inbox %q: %w", key, err)
	}
	return seq, nil
}

// DeleteInbox removes an inbox entry; deleting a missing entry is not an error.
func (t *tx) DeleteInbox(key string, seq uint64) error {
	if err := t.check("delete inbox"); err != nil {
		return err
	}
	if b := t.sub(key, bucketInbox); b != nil {
		if err := b.Delete(itob(seq)); err != nil {
			return fmt.Errorf("bolt: delete inbox %q %d: %w", key, seq, err)
		}
	}
	return nil
}

// AppendOutbox stores a reply to send and returns its seq. The stored copy has SessionKey
// and OutboxSeq set.
func (t *tx) AppendOutbox(key string, out messages.Outbound) (uint64, error) {
	if err := t.check("append outbox"); err != nil {
		return 0, err
	}
	b, err := t.subForWrite(key, bucketOutbox)
	if err != nil {
		return 0, fmt.Errorf("bolt: append outbox %q: %w", key, err)
	}
	out.SessionKey, out.OutboxSeq = key, b.Sequence()+1
	seq, err := appendJSON(b, out)
	if err != nil {
		return 0, fmt.Errorf("bolt: append outbox %q: %w", key, err)
	}
	return seq, nil
}

// DeleteOutbox removes an outbox entry; deleting a missing entry is not an error.
func (t *tx) DeleteOutbox(key string, seq uint64) error {
	if err := t.check("delete outbox"); err != nil {
		return err
	}
	if b := t.sub(key, bucketOutbox); b != nil {
		if err := b.Delete(itob(seq)); err != nil {
			return fmt.Errorf("bolt: delete outbox %q %d: %w", key, seq, err)
		}
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
		return false, fmt.Errorf("bolt: mark seen: %w", errEmptyKey)
	}
	b := t.btx.Bucket(bucketDedup)
	if b.Get([]byte(id)) != nil {
		return false, nil
	}
	if err := b.Put([]byte(id), itob(uint64(at.UnixNano()))); err != nil {
		return false, fmt.Errorf("bolt: mark seen %q: %w", id, err)
	}
	return true, nil
}

// PruneSeen removes dedup ids first seen before cutoff, looking at no more than limit ids
// (all when limit <= 0) from id from on; next is the id to continue from, "" at the end.
func (t *tx) PruneSeen(cutoff time.Time, from string, limit int) (int, string, error) {
	if err := t.check("prune seen"); err != nil {
		return 0, "", err
	}
	b := t.btx.Bucket(bucketDedup)
	var old [][]byte
	next := ""
	c := b.Cursor()
	seen := 0
	for k, v := c.Seek([]byte(from)); k != nil; k, v = c.Next() {
		if limit > 0 && seen == limit {
			next = string(k)
			break
		}
		seen++
		if isBefore(v, cutoff) {
			old = append(old, append([]byte(nil), k...))
		}
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, "", fmt.Errorf("bolt: prune seen: %w", err)
		}
	}
	return len(old), next, nil
}

// DeleteSession removes a session and everything under it; a missing session is not an error.
func (t *tx) DeleteSession(key string) error {
	if err := t.check("delete session"); err != nil {
		return err
	}
	if t.session(key) == nil {
		return nil
	}
	if err := t.btx.Bucket(bucketSessions).DeleteBucket([]byte(key)); err != nil {
		return fmt.Errorf("bolt: delete session %q: %w", key, err)
	}
	return nil
}
