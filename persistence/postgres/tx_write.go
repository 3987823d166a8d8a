package postgres

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// checkWrite is check for the writing methods: a View's Reader cannot write.
func (t *tx) checkWrite(op string) error {
	if err := t.check(op); err != nil {
		return err
	}
	if !t.write {
		return fmt.Errorf("postgres: %s: read-only transaction", op)
	}
	return nil
}

// PutSession creates or replaces a session's info.
func (t *tx) PutSession(info persistence.SessionInfo) error {
	if err := t.checkWrite("put session"); err != nil {
		return err
	}
	if info.Key == "" {
		return fmt.Errorf("postgres: put session: %w", errEmptyKey)
	}
	data, err := json.Marshal(info)
	if err == nil {
		_, err = t.q.Exec(t.ctx, `INSERT INTO reef_sessions AS s (key, info) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET info = EXCLUDED.info`, []byte(info.Key), data)
	}
	if err != nil {
		return fmt.Errorf("postgres: put session %q: %w", info.Key, err)
	}
	return nil
}

// appendSQL appends rows to a table in one statement: it takes n seqs from the session's
// counter column (creating the session's row) and inserts the values ($3, a bytea array)
// under them, returning the seqs.
func appendSQL(table, counter string) string {
	return `WITH s AS (
		INSERT INTO reef_sessions AS s (key, ` + counter + `) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET ` + counter + ` = s.` + counter + ` + EXCLUDED.` + counter + `
		RETURNING ` + counter + ` AS last)
	INSERT INTO ` + table + ` (key, seq, data)
	SELECT $1, s.last - $2 + d.n, d.data FROM s, unnest($3::bytea[]) WITH ORDINALITY AS d(data, n)
	RETURNING seq`
}

var (
	appendMessagesSQL = appendSQL("reef_messages", "msg_seq")
	appendInboxSQL    = appendSQL("reef_inbox", "inbox_seq")
	appendOutboxSQL   = appendSQL("reef_outbox", "outbox_seq")
)

// appendRows runs one of the append statements and returns the seqs, in order.
func (t *tx) appendRows(sql, key string, values [][]byte) ([]uint64, error) {
	if key == "" {
		return nil, errEmptyKey
	}
	rows, err := t.q.Query(t.ctx, sql, []byte(key), int64(len(values)), values)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seqs := make([]uint64, 0, len(values))
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, uint64(seq))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(seqs)
	return seqs, nil
}

// AppendMessages appends transcript entries and returns the seq given to each.
func (t *tx) AppendMessages(key string, msgs ...messages.ChatMessage) ([]uint64, error) {
	if err := t.checkWrite("append messages"); err != nil {
		return nil, err
	}
	values := make([][]byte, len(msgs))
	for i, m := range msgs {
		var err error
		if values[i], err = json.Marshal(m); err != nil {
			return nil, fmt.Errorf("postgres: append messages %q: %w", key, err)
		}
	}
	seqs, err := t.appendRows(appendMessagesSQL, key, values)
	if err != nil {
		return nil, fmt.Errorf("postgres: append messages %q: %w", key, err)
	}
	return seqs, nil
}

// appendOne appends one value with one of the append statements.
func (t *tx) appendOne(sql, key string, v any) (uint64, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return 0, err
	}
	seqs, err := t.appendRows(sql, key, [][]byte{data})
	if err != nil {
		return 0, err
	}
	return seqs[0], nil
}

// PutSnapshot stores a compaction summary covering every entry with seq <= snap.Seq. It
// refuses a snapshot that claims to cover entries not appended yet.
func (t *tx) PutSnapshot(key string, snap persistence.Snapshot) error {
	if err := t.checkWrite("put snapshot"); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("postgres: put snapshot: %w", errEmptyKey)
	}
	var last int64
	err := t.q.QueryRow(t.ctx, `SELECT COALESCE((SELECT msg_seq FROM reef_sessions WHERE key = $1), 0)`, []byte(key)).Scan(&last)
	if err != nil {
		return fmt.Errorf("postgres: put snapshot %q: %w", key, err)
	}
	if snap.Seq > uint64(last) {
		return fmt.Errorf("postgres: put snapshot %q: seq %d is past the last entry %d", key, snap.Seq, last)
	}
	data, err := json.Marshal(snap)
	if err == nil {
		_, err = t.q.Exec(t.ctx, `WITH s AS (INSERT INTO reef_sessions (key) VALUES ($1) ON CONFLICT (key) DO NOTHING)
			INSERT INTO reef_snapshots (key, seq, data) VALUES ($1, $2, $3)
			ON CONFLICT (key, seq) DO UPDATE SET data = EXCLUDED.data`, []byte(key), int64(snap.Seq), data)
	}
	if err != nil {
		return fmt.Errorf("postgres: put snapshot %q: %w", key, err)
	}
	return nil
}

// AppendInbox stores an accepted inbound message and returns its seq. The row keeps neither
// SessionKey nor InboxSeq: Inbox sets them from the row's key and seq.
func (t *tx) AppendInbox(key string, in messages.Inbound) (uint64, error) {
	if err := t.checkWrite("append inbox"); err != nil {
		return 0, err
	}
	in.SessionKey, in.InboxSeq = "", 0
	seq, err := t.appendOne(appendInboxSQL, key, in)
	if err == nil && t.notify {
		err = t.notifyInbox(key)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: append inbox %q: %w", key, err)
	}
	return seq, nil
}

// DeleteInbox removes an inbox entry; deleting a missing entry is not an error.
func (t *tx) DeleteInbox(key string, seq uint64) error {
	if err := t.checkWrite("delete inbox"); err != nil {
		return err
	}
	_, err := t.q.Exec(t.ctx, `DELETE FROM reef_inbox WHERE key = $1 AND seq = $2`, []byte(key), clampSeq(seq))
	if err != nil {
		return fmt.Errorf("postgres: delete inbox %q %d: %w", key, seq, err)
	}
	return nil
}

// AppendOutbox stores a reply to send and returns its seq. Outbox sets SessionKey and
// OutboxSeq from the row's key and seq.
func (t *tx) AppendOutbox(key string, out messages.Outbound) (uint64, error) {
	if err := t.checkWrite("append outbox"); err != nil {
		return 0, err
	}
	out.SessionKey, out.OutboxSeq = "", 0
	seq, err := t.appendOne(appendOutboxSQL, key, out)
	if err != nil {
		return 0, fmt.Errorf("postgres: append outbox %q: %w", key, err)
	}
	return seq, nil
}

// DeleteOutbox removes an outbox entry; deleting a missing entry is not an error.
func (t *tx) DeleteOutbox(key string, seq uint64) error {
	if err := t.checkWrite("delete outbox"); err != nil {
		return err
	}
	_, err := t.q.Exec(t.ctx, `DELETE FROM reef_outbox WHERE key = $1 AND seq = $2`, []byte(key), clampSeq(seq))
	if err != nil {
		return fmt.Errorf("postgres: delete outbox %q %d: %w", key, seq, err)
	}
	return nil
}

// MarkSeen records a dedup id; it reports false, and keeps the first time, if the id was
// already recorded.
func (t *tx) MarkSeen(id string, at time.Time) (bool, error) {
	if err := t.checkWrite("mark seen"); err != nil {
		return false, err
	}
	if id == "" {
		return false, fmt.Errorf("postgres: mark seen: %w", errEmptyKey)
	}
	tag, err := t.q.Exec(t.ctx, `INSERT INTO reef_dedup (id, at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
		[]byte(id), at.UnixNano())
	if err != nil {
		return false, fmt.Errorf("postgres: mark seen %q: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// PruneSeen removes dedup ids first seen before cutoff, looking at no more than limit ids
// (all when limit <= 0) from id from on; next is the id to continue from, "" at the end.
func (t *tx) PruneSeen(cutoff time.Time, from string, limit int) (int, string, error) {
	if err := t.checkWrite("prune seen"); err != nil {
		return 0, "", err
	}
	var lim *int64 // NULL: LIMIT ALL
	if limit > 0 {
		n := int64(limit)
		lim = &n
	}
	var removed int
	var next []byte
	err := t.q.QueryRow(t.ctx, `WITH look AS (
			SELECT id, at FROM reef_dedup WHERE id >= $1 ORDER BY id LIMIT $2),
		gone AS (
			DELETE FROM reef_dedup d USING look WHERE d.id = look.id AND look.at < $3 RETURNING 1)
		SELECT (SELECT count(*) FROM gone),
			CASE WHEN $2::bigint IS NULL THEN NULL
			ELSE (SELECT id FROM reef_dedup WHERE id >= $1 ORDER BY id OFFSET $2 LIMIT 1) END`,
		[]byte(from), lim, cutoff.UnixNano()).Scan(&removed, &next)
	if err != nil {
		return 0, "", fmt.Errorf("postgres: prune seen: %w", err)
	}
	return removed, string(next), nil
}

// DeleteSession removes a session and everything under it; a missing session is not an
// error. Its seqs start again from 1 if the key is used again, as with bolt.
func (t *tx) DeleteSession(key string) error {
	if err := t.checkWrite("delete session"); err != nil {
		return err
	}
	_, err := t.q.Exec(t.ctx, `WITH
			m AS (DELETE FROM reef_messages WHERE key = $1),
			sn AS (DELETE FROM reef_snapshots WHERE key = $1),
			i AS (DELETE FROM reef_inbox WHERE key = $1),
			o AS (DELETE FROM reef_outbox WHERE key = $1)
		DELETE FROM reef_sessions WHERE key = $1`, []byte(key))
	if err != nil {
		return fmt.Errorf("postgres: delete session %q: %w", key, err)
	}
	return nil
}
