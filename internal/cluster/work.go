package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
)

// Names of the units of work a cluster hands out besides partitions (WorkLeases).
const (
	WorkTimer = "timer" // the Timer: cron jobs and heartbeats (actors.Timer)
	// A channel's inbound loop is "channel:<platform>:<account>" (channels.InboundWork), a
	// Discord shard "channel:discord:<account>:shard:<id>" (discord.ShardUnit).
)

// workSchema creates the table of named work leases.
const workSchema = `
CREATE TABLE IF NOT EXISTS reef_work (
	name    text PRIMARY KEY,
	owner   text NOT NULL,
	epoch   bigint NOT NULL,
	expires timestamptz NOT NULL
);
`

// Work is a node's hold on a named unit of work: a channel's inbound loop, a Discord shard,
// the Timer. Like a partition's Lease, it has an epoch that rises with every change of
// holder, and it lasts until Expires (the database's clock) unless renewed.
type Work struct {
	Name    string
	Owner   string
	Epoch   int64
	Expires time.Time
	Live    bool // List: the lease had not expired when it was read
}

// WorkLeases keeps the reef_work table: one row per named unit of work, held by at most one
// node at a time.
type WorkLeases struct {
	pool *pgxpool.Pool
	ttl  time.Duration
}

// NewWorkLeases creates the table when missing. ttl is how long a lease lasts without a
// renewal (cluster.leaseSeconds).
func NewWorkLeases(ctx context.Context, pool *pgxpool.Pool, ttl time.Duration) (*WorkLeases, error) {
	if _, err := pool.Exec(ctx, workSchema); err != nil {
		return nil, fmt.Errorf("cluster: create work table: %w", err)
	}
	return &WorkLeases{pool: pool, ttl: ttl}, nil
}

// TTL is how long a lease lasts without a renewal.
func (w *WorkLeases) TTL() time.Duration { return w.ttl }

// Acquire gives node the lease on the unit name when nobody holds it, its lease expired or
// was released, or node holds it already (then it is renewed with the same epoch). Taking
// it over raises the epoch. ErrHeld: another node holds it.
func (w *WorkLeases) Acquire(ctx context.Context, node, name string) (Work, error) {
	out := Work{Live: true}
	err := w.pool.QueryRow(ctx, `INSERT INTO reef_work AS w (name, owner, epoch, expires)
		VALUES ($1, $2, 1, now() + $3::interval)
		ON CONFLICT (name) DO UPDATE SET
			owner = EXCLUDED.owner,
			epoch = CASE WHEN w.owner = EXCLUDED.owner AND w.expires > now() THEN w.epoch ELSE w.epoch + 1 END,
			expires = EXCLUDED.expires
		WHERE w.owner = EXCLUDED.owner OR w.expires <= now()
		RETURNING name, owner, epoch, expires`, name, node, w.ttl.String()).
		Scan(&out.Name, &out.Owner, &out.Epoch, &out.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Work{}, ErrHeld
	}
	if err != nil {
		return Work{}, fmt.Errorf("cluster: acquire %s: %w", name, err)
	}
	return out, nil
}

// Renew extends a live lease; ErrFenced when it expired or moved.
func (w *WorkLeases) Renew(ctx context.Context, work Work) (Work, error) {
	err := w.pool.QueryRow(ctx, `UPDATE reef_work SET expires = now() + $4::interval
		WHERE name = $1 AND owner = $2 AND epoch = $3 AND expires > now() RETURNING expires`,
		work.Name, work.Owner, work.Epoch, w.ttl.String()).Scan(&work.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Work{}, ErrFenced
	}
	if err != nil {
		return Work{}, fmt.Errorf("cluster: renew %s: %w", work.Name, err)
	}
	return work, nil
}

// Release ends a lease at once (a graceful stop), so another node takes the work over
// without waiting for it to expire. Releasing a lease that moved on does nothing.
func (w *WorkLeases) Release(ctx context.Context, work Work) error {
	_, err := w.pool.Exec(ctx, `UPDATE reef_work SET expires = now()
		WHERE name = $1 AND owner = $2 AND epoch = $3 AND expires > now()`, work.Name, work.Owner, work.Epoch)
	if err != nil {
		return fmt.Errorf("cluster: release %s: %w", work.Name, err)
	}
	return nil
}

// Nodes counts the live members of the cluster (a heartbeat younger than the ttl), at least
// one; before any node's partition loop made the members table, one.
func (w *WorkLeases) Nodes(ctx context.Context) (int, error) {
	var n int
	err := w.pool.QueryRow(ctx, `SELECT count(*) FROM reef_members WHERE heartbeat > now() - $1::interval`, w.ttl.String()).Scan(&n)
	if isUndefinedTable(err) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: count nodes: %w", err)
	}
	return max(n, 1), nil
}

// List returns every unit of work ever leased, by name, with whether its lease is live.
func (w *WorkLeases) List(ctx context.Context) ([]Work, error) {
	return ListWork(ctx, w.pool)
}

// ListWork is List for a reader without a WorkLeases (reef cluster status): no table yet is
// no work.
func ListWork(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) ([]Work, error) {
	rows, err := q.Query(ctx, `SELECT name, owner, epoch, expires, expires > now() FROM reef_work ORDER BY name`)
	if err != nil {
		if isUndefinedTable(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("cluster: list work: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Work, error) {
		var w Work
		err := r.Scan(&w.Name, &w.Owner, &w.Epoch, &w.Expires, &w.Live)
		return w, err
	})
	if err != nil {
		if isUndefinedTable(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("cluster: list work: %w", err)
	}
	return out, nil
}

// FenceWork is Fence for a unit of work: inside a write transaction of the PostgreSQL store,
// it fails with ErrFenced unless work is still the unit's live lease, and holds the lease
// row (FOR SHARE) until the transaction ends.
func FenceWork(tx persistence.Tx, work Work) error {
	ctx, q, ok := postgres.Underlying(tx)
	if !ok {
		return errors.New("cluster: fence work: not a transaction of the PostgreSQL store")
	}
	var live bool
	err := q.QueryRow(ctx, `SELECT expires > clock_timestamp() FROM reef_work
		WHERE name = $1 AND owner = $2 AND epoch = $3 FOR SHARE`, work.Name, work.Owner, work.Epoch).Scan(&live)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !live {
		return ErrFenced
	}
	if err != nil {
		return fmt.Errorf("cluster: fence work: %w", err)
	}
	return nil
}

// isUndefinedTable reports PostgreSQL's "relation does not exist" (42P01).
func isUndefinedTable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "42P01"
}
