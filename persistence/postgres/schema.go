package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/reefgw/reef/persistence"
)

// SchemaVersion is the store format this package reads and writes: persistence.Format, the
// same number as bolt's for the same records.
const SchemaVersion = persistence.Format

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

// upgrade is one step of the store format, from format from to from+1, run in the
// transaction that upgrades the database; stamp writes the new format after it.
type upgrade struct {
	from int
	what string
	run  func(ctx context.Context, ptx pgx.Tx) error
}

// upgrades are the steps from each older format to the next, in order (format 0 never
// existed here: the tables and the format record were always written together).
// TestUpgradesCoverEveryFormat checks that they join format 1 to persistence.Format.
var upgrades = []upgrade{
	{1, "records the oldest reef release that reads the database (reef_meta 'needs')", func(context.Context, pgx.Tx) error { return nil }},
}

// migrate creates the tables when missing, writes the format of a new database, upgrades one
// in an older format and refuses one in a newer format, in one transaction under an advisory
// lock (nodes starting together upgrade once).
func (s *Store) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(ptx pgx.Tx) error {
		if _, err := ptx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLock)); err != nil {
			return err
		}
		if _, err := ptx.Exec(ctx, schema); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
		v, err := metaValue(ctx, ptx, "schema")
		if errors.Is(err, pgx.ErrNoRows) {
			return stamp(ctx, ptx, SchemaVersion)
		}
		if err != nil {
			return err
		}
		from, err := persistence.ParseFormat(v)
		if err != nil {
			return err
		}
		if from > SchemaVersion {
			needs, _ := metaValue(ctx, ptx, "needs")
			return &persistence.FormatError{Store: "the PostgreSQL database", Format: from, Needs: needs}
		}
		for _, u := range upgrades {
			if u.from < from {
				continue
			}
			if err := u.run(ctx, ptx); err != nil {
				return fmt.Errorf("upgrade from store format %d: %w", u.from, err)
			}
			if err := stamp(ctx, ptx, u.from+1); err != nil {
				return err
			}
		}
		return nil
	})
}

func metaValue(ctx context.Context, ptx pgx.Tx, name string) (string, error) {
	var v string
	err := ptx.QueryRow(ctx, "SELECT value FROM reef_meta WHERE name = $1", name).Scan(&v)
	return v, err
}

// stamp records format n, and the release it needs when it names one.
func stamp(ctx context.Context, ptx pgx.Tx, n int) error {
	put := func(name, value string) error {
		_, err := ptx.Exec(ctx, "INSERT INTO reef_meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value", name, value)
		return err
	}
	if err := put("schema", strconv.Itoa(n)); err != nil {
		return err
	}
	if r, ok := persistence.FormatRelease[n]; ok {
		return put("needs", r)
	}
	return nil
}

// checkSchema describes a recorded format this reef does not run on, or returns nil.
func checkSchema(v string) error {
	n, err := persistence.ParseFormat(v)
	if err != nil {
		return err
	}
	if n > SchemaVersion {
		return &persistence.FormatError{Store: "the PostgreSQL database", Format: n}
	}
	return nil
}
