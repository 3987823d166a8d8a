package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Counts are the sizes /metrics reports of the store.
type Counts struct {
	Sessions int // stored sessions (rows of reef_sessions)
	Inbox    int // inbox rows: messages accepted and not yet answered
	Outbox   int // outbox rows: replies not yet confirmed sent
}

// Counts counts sessions, inbox and outbox rows in one snapshot. began, when not nil, is
// called once the snapshot is taken: the counts are of the state of the last commit before it.
func (s *Store) Counts(began func()) (Counts, error) {
	var c Counts
	err := s.snapshot("counts", func(ctx context.Context, ptx pgx.Tx) error {
		// The snapshot of a REPEATABLE READ transaction is taken by its first statement.
		if _, err := ptx.Exec(ctx, "SELECT 1"); err != nil {
			return err
		}
		if began != nil {
			began()
		}
		return ptx.QueryRow(ctx, `SELECT (SELECT count(*) FROM reef_sessions), (SELECT count(*) FROM reef_inbox),
			(SELECT count(*) FROM reef_outbox)`).Scan(&c.Sessions, &c.Inbox, &c.Outbox)
	})
	return c, err
}

// SessionCount counts the stored sessions.
func (s *Store) SessionCount() (int, error) {
	var n int
	err := s.snapshot("session count", func(ctx context.Context, ptx pgx.Tx) error {
		return ptx.QueryRow(ctx, `SELECT count(*) FROM reef_sessions`).Scan(&n)
	})
	return n, err
}

// TableCounts returns the row count of each of reef's tables (Tables), from one snapshot:
// `reef migrate` compares them with what it copied.
func (s *Store) TableCounts() (map[string]int64, error) {
	out := map[string]int64{}
	err := s.snapshot("table counts", func(ctx context.Context, ptx pgx.Tx) error {
		for _, t := range Tables {
			var n int64
			if err := ptx.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
				return err
			}
			out[t] = n
		}
		return nil
	})
	return out, err
}

// snapshot runs fn in a REPEATABLE READ READ ONLY transaction of its own.
func (s *Store) snapshot(op string, fn func(context.Context, pgx.Tx) error) error {
	if err := s.begin(op); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(ptx pgx.Tx) error { return fn(ctx, ptx) })
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	return nil
}
