package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reefgw/reef/persistence"
)

// importBatch is how many rows Import sends per round trip.
const importBatch = 500

// ErrNotEmpty is Import's error when the database already holds reef data.
var ErrNotEmpty = errors.New("the database already holds reef data")

// TableOf is the table that holds each kind of record, for comparing counts after Import.
var TableOf = map[persistence.RecordKind]string{
	persistence.RecordSession: "reef_sessions", persistence.RecordMessage: "reef_messages",
	persistence.RecordSnapshot: "reef_snapshots", persistence.RecordInbox: "reef_inbox",
	persistence.RecordOutbox: "reef_outbox", persistence.RecordDedup: "reef_dedup", persistence.RecordKV: "reef_kv",
}

// Import copies every record walk gives into the database, in one transaction: either all
// of them are kept or none. It refuses (ErrNotEmpty) a database that holds any reef row
// already. walk is typically (*bolt.Store).Export.
func (s *Store) Import(ctx context.Context, walk func(fn func(persistence.Record) error) error) error {
	if err := s.begin("import"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, func(ptx pgx.Tx) error {
		var used bool
		err := ptx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM reef_sessions) OR EXISTS (SELECT 1 FROM reef_dedup)
			OR EXISTS (SELECT 1 FROM reef_kv)`).Scan(&used)
		if err != nil {
			return err
		}
		if used {
			return ErrNotEmpty
		}
		b := &pgx.Batch{}
		flush := func() error {
			if b.Len() == 0 {
				return nil
			}
			err := ptx.SendBatch(ctx, b).Close()
			b = &pgx.Batch{}
			return err
		}
		err = walk(func(r persistence.Record) error {
			if err := queueRecord(b, r); err != nil {
				return err
			}
			if b.Len() >= importBatch {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	})
	if err != nil {
		return fmt.Errorf("postgres: import: %w", err)
	}
	return nil
}

// queueRecord queues the INSERT of one record.
func queueRecord(b *pgx.Batch, r persistence.Record) error {
	key := []byte(r.Key)
	switch r.Kind {
	case persistence.RecordSession:
		b.Queue(`INSERT INTO reef_sessions (key, info, msg_seq, inbox_seq, outbox_seq) VALUES ($1, $2, $3, $4, $5)`,
			key, r.Value, clampSeq(r.Seqs.Messages), clampSeq(r.Seqs.Inbox), clampSeq(r.Seqs.Outbox))
	case persistence.RecordMessage, persistence.RecordSnapshot, persistence.RecordInbox, persistence.RecordOutbox:
		b.Queue(`INSERT INTO `+TableOf[r.Kind]+` (key, seq, data) VALUES ($1, $2, $3)`, key, clampSeq(r.Seq), r.Value)
	case persistence.RecordDedup:
		b.Queue(`INSERT INTO reef_dedup (id, at) VALUES ($1, $2)`, key, r.At)
	case persistence.RecordKV:
		if err := checkBucket(r.Bucket); err != nil {
			return err
		}
		v := r.Value
		if v == nil {
			v = []byte{}
		}
		b.Queue(`INSERT INTO reef_kv (bucket, key, value) VALUES ($1, $2, $3)`, []byte(r.Bucket), key, v)
	default:
		return fmt.Errorf("unknown record kind %q", r.Kind)
	}
	return nil
}
