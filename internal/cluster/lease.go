package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
)

// DefaultPartitions is cluster.partitions' default.
const DefaultPartitions = 256

// ErrFenced is Fence's error: the node no longer holds the lease it writes under. The
// transaction must be abandoned (Update rolls it back when fn returns the error).
var ErrFenced = errors.New("cluster: the partition's lease has moved to another node")

// ErrHeld is Acquire's error when another node holds a live lease on the partition.
var ErrHeld = errors.New("cluster: the partition is leased to another node")

// schema creates the members and leases tables.
const schema = `
CREATE TABLE IF NOT EXISTS reef_members (
	node      text PRIMARY KEY,
	heartbeat timestamptz NOT NULL,
	started   timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS reef_leases (
	part    integer PRIMARY KEY,
	owner   text NOT NULL,
	epoch   bigint NOT NULL,
	expires timestamptz NOT NULL
);
`

// Partition returns the partition of a session key among n (FNV-1a, so every node and
// every release agrees).
func Partition(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// Assign spreads n partitions evenly over the live members: partition p goes to the
// (p mod len)th member in name order. Every node computes the same table from the same
// members list.
func Assign(members []string, n int) map[int]string {
	if len(members) == 0 {
		return nil
	}
	sorted := slices.Sorted(slices.Values(members))
	out := make(map[int]string, n)
	for p := range n {
		out[p] = sorted[p%len(sorted)]
	}
	return out
}

// Lease is a node's hold on a partition.
type Lease struct {
	Partition int
	Owner     string
	Epoch     int64
	Expires   time.Time // the database's clock
}

// Leases keeps the members and leases tables of one database.
type Leases struct {
	pool *pgxpool.Pool
	ttl  time.Duration
}

// New creates the tables when missing. ttl is how long a lease and a heartbeat last
// (cluster.leaseSeconds).
func New(ctx context.Context, pool *pgxpool.Pool, ttl time.Duration) (*Leases, error) {
	if _, err := pool.Exec(ctx, schema); err != nil {
		return nil, fmt.Errorf("cluster: create tables: %w", err)
	}
	return &Leases{pool: pool, ttl: ttl}, nil
}

// Heartbeat registers node as live (or keeps it so).
func (l *Leases) Heartbeat(ctx context.Context, node string) error {
	_, err := l.pool.Exec(ctx, `INSERT INTO reef_members (node, heartbeat, started) VALUES ($1, now(), now())
		ON CONFLICT (node) DO UPDATE SET heartbeat = now()`, node)
	if err != nil {
		return fmt.Errorf("cluster: heartbeat: %w", err)
	}
	return nil
}

// Members lists the nodes whose last heartbeat is younger than the ttl, by name.
func (l *Leases) Members(ctx context.Context) ([]string, error) {
	rows, err := l.pool.Query(ctx, `SELECT node FROM reef_members WHERE heartbeat > now() - $1::interval ORDER BY node`,
		l.ttl.String())
	if err != nil {
		return nil, fmt.Errorf("cluster: members: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("cluster: members: %w", err)
	}
	return out, nil
}

// Acquire gives node the lease on a partition when nobody holds it, its lease expired, or
// node holds it already (then it is renewed with the same epoch). Taking it over from
// another node, or after a lapse, raises the epoch: writes fenced with the old one fail.
func (l *Leases) Acquire(ctx context.Context, node string, part int) (Lease, error) {
	var out Lease
	err := l.pool.QueryRow(ctx, `INSERT INTO reef_leases AS l (part, owner, epoch, expires)
		VALUES ($1, $2, 1, now() + $3::interval)
		ON CONFLICT (part) DO UPDATE SET
			owner = EXCLUDED.owner,
			epoch = CASE WHEN l.owner = EXCLUDED.owner AND l.expires > now() THEN l.epoch ELSE l.epoch + 1 END,
			expires = EXCLUDED.expires
		WHERE l.owner = EXCLUDED.owner OR l.expires <= now()
		RETURNING part, owner, epoch, expires`, part, node, l.ttl.String()).
		Scan(&out.Partition, &out.Owner, &out.Epoch, &out.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, ErrHeld
	}
	if err != nil {
		return Lease{}, fmt.Errorf("cluster: acquire %d: %w", part, err)
	}
	return out, nil
}

// Renew extends a live lease; it fails with ErrFenced when the lease expired or moved.
func (l *Leases) Renew(ctx context.Context, lease Lease) (Lease, error) {
	err := l.pool.QueryRow(ctx, `UPDATE reef_leases SET expires = now() + $4::interval
		WHERE part = $1 AND owner = $2 AND epoch = $3 AND expires > now() RETURNING expires`,
		lease.Partition, lease.Owner, lease.Epoch, l.ttl.String()).Scan(&lease.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, ErrFenced
	}
	if err != nil {
		return Lease{}, fmt.Errorf("cluster: renew %d: %w", lease.Partition, err)
	}
	return lease, nil
}

// Fence checks, inside the transaction of tx (a postgres store's Update), that lease is
// still the partition's live lease, and locks the lease row (FOR SHARE) until the
// transaction ends. The owner calls it first in every write transaction. A takeover
// committed before the check makes it fail: ErrFenced, or, when the row changed after the
// transaction's snapshot, a serialization failure on which Update runs fn again and then
// fences. A takeover attempted after the check waits for the transaction to end, so the
// owner's last write comes strictly before the new owner's first read. A node frozen inside
// a transaction holds that lock until PostgreSQL ends its session: in cluster mode the
// store's connections have idle_in_transaction_session_timeout at half the lease's ttl
// (postgres.Options.IdleInTransaction).
func Fence(tx persistence.Tx, lease Lease) error {
	ctx, q, ok := postgres.Underlying(tx)
	if !ok {
		return errors.New("cluster: fence: not a transaction of the PostgreSQL store")
	}
	var live bool
	err := q.QueryRow(ctx, `SELECT expires > clock_timestamp() FROM reef_leases
		WHERE part = $1 AND owner = $2 AND epoch = $3 FOR SHARE`,
		lease.Partition, lease.Owner, lease.Epoch).Scan(&live)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !live {
		return ErrFenced
	}
	if err != nil {
		return fmt.Errorf("cluster: fence: %w", err) // a serialization failure: Update runs fn again
	}
	return nil
}
