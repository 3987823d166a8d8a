package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

var errEmptyKey = errors.New("empty key")

// tx implements persistence.Tx (inside Update) and persistence.Reader (inside View). Every
// value is decoded from bytes pgx copied, so nothing returned shares memory with the store.
type tx struct {
	ctx    context.Context
	q      pgx.Tx
	write  bool
	done   bool
	notify bool // announce inbox entries (Options.Notify)
}

var _ persistence.Tx = (*tx)(nil)

func (t *tx) check(op string) error {
	if t.done {
		return fmt.Errorf("postgres: %s: transaction has ended: %w", op, persistence.ErrClosed)
	}
	return nil
}

// seqRows reads (seq, data) rows and decodes each data into a T, calling fn with its seq.
func seqRows[T any](t *tx, fn func(seq uint64, v T), sql string, args ...any) error {
	rows, err := t.q.Query(t.ctx, sql, args...)
	if err != nil {
		return err
	}
	var seq int64
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&seq, &data}, func() error {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("seq %d: %w", seq, err)
		}
		fn(uint64(seq), v)
		return nil
	})
	return err
}

// Session returns the info of a session and whether it exists.
func (t *tx) Session(key string) (persistence.SessionInfo, bool, error) {
	if err := t.check("session"); err != nil {
		return persistence.SessionInfo{}, false, err
	}
	var raw []byte
	err := t.q.QueryRow(t.ctx, `SELECT info FROM reef_sessions WHERE key = $1`, []byte(key)).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && raw == nil {
		return persistence.SessionInfo{}, false, nil
	}
	if err != nil {
		return persistence.SessionInfo{}, false, fmt.Errorf("postgres: session %q: %w", key, err)
	}
	var info persistence.SessionInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return persistence.SessionInfo{}, false, fmt.Errorf("postgres: session %q: %w", key, err)
	}
	return info, true, nil
}

// Sessions lists every session that has info, ordered by key.
func (t *tx) Sessions() ([]persistence.SessionInfo, error) {
	if err := t.check("sessions"); err != nil {
		return nil, err
	}
	rows, err := t.q.Query(t.ctx, `SELECT info FROM reef_sessions WHERE info IS NOT NULL ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("postgres: sessions: %w", err)
	}
	var out []persistence.SessionInfo
	var raw []byte
	_, err = pgx.ForEachRow(rows, []any{&raw}, func() error {
		var info persistence.SessionInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return err
		}
		out = append(out, info)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: sessions: %w", err)
	}
	return out, nil
}

// Messages returns transcript entries with seq > after, in order.
func (t *tx) Messages(key string, after uint64) ([]persistence.Entry, error) {
	if err := t.check("messages"); err != nil {
		return nil, err
	}
	var out []persistence.Entry
	err := seqRows(t, func(seq uint64, m messages.ChatMessage) {
		out = append(out, persistence.Entry{Seq: seq, ChatMessage: m})
	}, `SELECT seq, data FROM reef_messages WHERE key = $1 AND seq > $2 ORDER BY seq`, []byte(key), clampSeq(after))
	if err != nil {
		return nil, fmt.Errorf("postgres: messages %q: %w", key, err)
	}
	return out, nil
}

// LatestSnapshot returns the snapshot with the highest seq.
func (t *tx) LatestSnapshot(key string) (persistence.Snapshot, bool, error) {
	if err := t.check("latest snapshot"); err != nil {
		return persistence.Snapshot{}, false, err
	}
	var snap persistence.Snapshot
	found := false
	err := seqRows(t, func(seq uint64, s persistence.Snapshot) {
		s.Seq, snap, found = seq, s, true
	}, `SELECT seq, data FROM reef_snapshots WHERE key = $1 ORDER BY seq DESC LIMIT 1`, []byte(key))
	if err != nil {
		return persistence.Snapshot{}, false, fmt.Errorf("postgres: latest snapshot %q: %w", key, err)
	}
	return snap, found, nil
}

// Snapshots returns every snapshot of a session, ordered by seq.
func (t *tx) Snapshots(key string) ([]persistence.Snapshot, error) {
	if err := t.check("snapshots"); err != nil {
		return nil, err
	}
	var out []persistence.Snapshot
	err := seqRows(t, func(seq uint64, s persistence.Snapshot) {
		s.Seq = seq
		out = append(out, s)
	}, `SELECT seq, data FROM reef_snapshots WHERE key = $1 ORDER BY seq`, []byte(key))
	if err != nil {
		return nil, fmt.Errorf("postgres: snapshots %q: %w", key, err)
	}
	return out, nil
}

// Inbox returns the session's inbox, in order, each with SessionKey and InboxSeq set.
func (t *tx) Inbox(key string) ([]persistence.InboxItem, error) {
	if err := t.check("inbox"); err != nil {
		return nil, err
	}
	var out []persistence.InboxItem
	err := seqRows(t, func(seq uint64, in messages.Inbound) {
		in.SessionKey, in.InboxSeq = key, seq
		out = append(out, persistence.InboxItem{Seq: seq, Inbound: in})
	}, `SELECT seq, data FROM reef_inbox WHERE key = $1 ORDER BY seq`, []byte(key))
	if err != nil {
		return nil, fmt.Errorf("postgres: inbox %q: %w", key, err)
	}
	return out, nil
}

// Outbox returns the session's outbox, in order, each with SessionKey and OutboxSeq set.
func (t *tx) Outbox(key string) ([]persistence.OutboxItem, error) {
	if err := t.check("outbox"); err != nil {
		return nil, err
	}
	var out []persistence.OutboxItem
	err := seqRows(t, func(seq uint64, o messages.Outbound) {
		o.SessionKey, o.OutboxSeq = key, seq
		out = append(out, persistence.OutboxItem{Seq: seq, Outbound: o})
	}, `SELECT seq, data FROM reef_outbox WHERE key = $1 ORDER BY seq`, []byte(key))
	if err != nil {
		return nil, fmt.Errorf("postgres: outbox %q: %w", key, err)
	}
	return out, nil
}

// PendingSessions lists, ordered by key, the sessions with a non-empty inbox or outbox.
func (t *tx) PendingSessions() ([]string, error) {
	if err := t.check("pending sessions"); err != nil {
		return nil, err
	}
	rows, err := t.q.Query(t.ctx, `SELECT key FROM reef_inbox UNION SELECT key FROM reef_outbox ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("postgres: pending sessions: %w", err)
	}
	var out []string
	var key []byte
	_, err = pgx.ForEachRow(rows, []any{&key}, func() error {
		out = append(out, string(key))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: pending sessions: %w", err)
	}
	return out, nil
}

// Seen reports whether a dedup id was recorded.
func (t *tx) Seen(id string) (bool, error) {
	if err := t.check("seen"); err != nil {
		return false, err
	}
	if id == "" {
		return false, nil
	}
	var ok bool
	err := t.q.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM reef_dedup WHERE id = $1)`, []byte(id)).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("postgres: seen %q: %w", id, err)
	}
	return ok, nil
}

// clampSeq turns a seq into a bigint parameter; seqs past the bigint range select nothing,
// as no stored seq is that large.
func clampSeq(seq uint64) int64 {
	if seq > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(seq)
}

// Underlying returns the pgx transaction and context behind a persistence.Tx or Reader this
// package handed out, for packages that keep their own tables in the same database and must
// act in the same transaction (the cluster's fencing check). ok is false for another store's
// Tx, or one whose transaction has ended.
func Underlying(r persistence.Reader) (ctx context.Context, q pgx.Tx, ok bool) {
	for { // a wrapper (metrics' counting Tx) hands out the transaction it wraps
		w, wraps := r.(interface{ Unwrap() persistence.Tx })
		if !wraps {
			break
		}
		r = w.Unwrap()
	}
	t, isOurs := r.(*tx)
	if !isOurs || t.done {
		return nil, nil, false
	}
	return t.ctx, t.q, true
}
