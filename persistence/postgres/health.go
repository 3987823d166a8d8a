package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MinServerVersion is the oldest PostgreSQL reef runs on (server_version_num of 15.0).
const MinServerVersion = 150000

// MaxClockSkew is the most the database's clock may differ from this machine's before
// `reef doctor` complains: leases and cron are judged by the database's clock, logs and
// timeouts by the machine's.
const MaxClockSkew = 2 * time.Second

// Health is what Check found.
type Health struct {
	Version       string        // the server's version, as it says it ("15.8 (Debian ...)")
	VersionNum    int           // server_version_num
	Schema        int           // reef's schema version in the database; 0 when reef never ran there
	MissingTables []string      // reef's tables that are not there
	ClockSkew     time.Duration // the database's clock minus this machine's
}

// Check connects to url without changing anything and reports the server's version,
// reef's schema and the clock skew. It fails only when the database cannot be reached or
// queried; the caller judges the findings.
func Check(ctx context.Context, url string) (Health, error) {
	var h Health
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return h, fmt.Errorf("postgres: connect: %w", redactURL(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := conn.QueryRow(ctx, `SELECT version(), current_setting('server_version_num')::int`).Scan(&h.Version, &h.VersionNum); err != nil {
		return h, fmt.Errorf("postgres: version: %w", err)
	}
	before := time.Now()
	var db time.Time
	if err := conn.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&db); err != nil {
		return h, fmt.Errorf("postgres: clock: %w", err)
	}
	after := time.Now()
	h.ClockSkew = db.Sub(before.Add(after.Sub(before) / 2)).Round(time.Millisecond)
	for _, t := range append([]string{"reef_meta"}, Tables...) {
		var found bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, t).Scan(&found); err != nil {
			return h, fmt.Errorf("postgres: tables: %w", err)
		}
		if !found {
			h.MissingTables = append(h.MissingTables, t)
		}
	}
	if len(h.MissingTables) == 0 {
		var v string
		err := conn.QueryRow(ctx, `SELECT value FROM reef_meta WHERE name = 'schema'`).Scan(&v)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return h, fmt.Errorf("postgres: schema: %w", err)
		}
		fmt.Sscan(v, &h.Schema)
	}
	return h, nil
}

// Problems returns what is wrong in h, each as a sentence; none when reef can run there. A
// database reef never ran on (no tables) is fine: reef creates them.
func (h Health) Problems() []string {
	var out []string
	if h.VersionNum < MinServerVersion {
		out = append(out, fmt.Sprintf("PostgreSQL %s is older than 15, which reef needs", h.Version))
	}
	fresh := len(h.MissingTables) == len(Tables)+1
	switch {
	case fresh:
	case len(h.MissingTables) > 0:
		out = append(out, fmt.Sprintf("reef's tables are incomplete: %v missing", h.MissingTables))
	case h.Schema != SchemaVersion:
		if err := checkSchema(fmt.Sprint(h.Schema)); err != nil {
			out = append(out, err.Error())
		}
	}
	if h.ClockSkew > MaxClockSkew || -h.ClockSkew > MaxClockSkew {
		out = append(out, fmt.Sprintf("the database's clock is %v off this machine's (more than %v): run NTP (chrony, systemd-timesyncd) on both", h.ClockSkew, MaxClockSkew))
	}
	return out
}
