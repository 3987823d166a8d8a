package postgres

import (
	"context"
	"fmt"
	"time"
)

// InboxChannel is the LISTEN/NOTIFY channel on which a store opened with Options.Notify
// announces inbox entries: the payload is the session's key. PostgreSQL delivers a
// notification when its transaction commits, and never for one rolled back, so a listener
// hears of an entry only once it can read it.
const InboxChannel = "reef_inbox"

// notifyInbox announces an inbox entry of key in the transaction that writes it.
func (t *tx) notifyInbox(key string) error {
	_, err := t.q.Exec(t.ctx, `SELECT pg_notify($1, $2)`, InboxChannel, key)
	return err
}

// Listen calls fn with the session key of every inbox entry committed by any store of the
// database opened with Options.Notify, until ctx ends. It holds one connection of its own
// and, when that connection fails, connects again after a pause; each time it (re)connects
// it calls fn with "" first, since notifications sent meanwhile are lost: the caller sweeps
// the inbox then. fn runs on Listen's goroutine and must not block.
func (s *Store) Listen(ctx context.Context, fn func(key string)) error {
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		_ = s.listenOnce(ctx, fn) // a lost connection: the caller's sweep at "" covers the gap
		if ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
		}
		pause = min(2*pause, 5*time.Second)
	}
	return ctx.Err()
}

func (s *Store) listenOnce(ctx context.Context, fn func(key string)) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: listen: %w", err)
	}
	conn := c.Hijack() // kept out of the pool: LISTEN belongs to this session
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+InboxChannel); err != nil {
		return fmt.Errorf("postgres: listen: %w", err)
	}
	fn("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("postgres: listen: %w", err)
		}
		fn(n.Payload)
	}
}
