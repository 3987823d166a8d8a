package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// SchemaVersion is the layout version this package reads and writes.
const SchemaVersion = 1

// schemaLock is the advisory lock key Open holds while it creates the tables, so that nodes
// starting together do not race (the bytes of "reefschm").
const schemaLock = 0x7265656673636860

// schema creates reef's tables. bytea keys sort in byte order, as bbolt's keys do.
const schema = `
CREATE TABLE IF NOT EXISTS reef_meta (
	name  text PRIMARY KEY,
	value text NOT NULL
);
CREATE TABLE IF NOT EXISTS reef_sessions (
	key        bytea PRIMARY KEY,
	info       bytea,
	msg_seq    bigint NOT NULL DEFAULT 0,
	inbox_seq  bigint NOT NULL DEFAULT 0,
	outbox_seq bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS reef_messages (
	key  bytea  NOT NULL,
	seq  bigint NOT NULL,
	data bytea  NOT NULL,
	PRIMARY KEY (key, seq)
);
CREATE TABLE IF NOT EXISTS reef_snapshots (
	key  bytea  NOT NULL,
	seq  bigint NOT NULL,
	data bytea  NOT NULL,
	PRIMARY KEY (key, seq)
);
CREATE TABLE IF NOT EXISTS reef_inbox (
	key  bytea  NOT NULL,
	seq  bigint NOT NULL,
	data bytea  NOT NULL,
	PRIMARY KEY (key, seq)
);
CREATE TABLE IF NOT EXISTS reef_outbox (
	key  bytea  NOT NULL,
	seq  bigint NOT NULL,
	data bytea  NOT NULL,
	PRIMARY KEY (key, seq)
);
CREATE TABLE IF NOT EXISTS reef_dedup (
	id bytea  PRIMARY KEY,
	at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS reef_kv (
	bucket bytea NOT NULL,
	key    bytea NOT NULL,
	value  bytea NOT NULL,
	PRIMARY KEY (bucket, key)
);
`

// Tables are reef's tables, in the order `reef migrate` and `reef doctor` count them.
var Tables = []string{"reef_sessions", "reef_messages", "reef_snapshots", "reef_inbox", "reef_outbox", "reef_dedup", "reef_kv"}

// migrate creates the tables when missing and checks or writes the schema version, under an
// advisory lock.
func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(ptx pgx.Tx) error {
		if _, err := ptx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLock)); err != nil {
			return err
		}
		if _, err := ptx.Exec(ctx, schema); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
		var v string
		err := ptx.QueryRow(ctx, "SELECT value FROM reef_meta WHERE name = 'schema'").Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = ptx.Exec(ctx, "INSERT INTO reef_meta (name, value) VALUES ('schema', $1)", strconv.Itoa(SchemaVersion))
			return err
		}
		if err != nil {
			return err
		}
		return checkSchema(v)
	})
}

// checkSchema refuses a schema version other than SchemaVersion.
func checkSchema(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("unreadable schema version %q", v)
	}
	if n > SchemaVersion {
		return fmt.Errorf("schema version %d is newer than this reef supports (%d): upgrade reef", n, SchemaVersion)
	}
	if n < SchemaVersion {
		return fmt.Errorf("schema version %d is older than %d and there is no migration", n, SchemaVersion)
	}
	return nil
}
