package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
)

// The batch forms of lease.go's calls, for Node: one statement for every partition a node
// holds, whatever their number.

// TTL returns how long a lease and a heartbeat last.
func (l *Leases) TTL() time.Duration { return l.ttl }

// Live lists the leases that have not expired, by partition.
func (l *Leases) Live(ctx context.Context) ([]Lease, error) {
	rows, err := l.pool.Query(ctx, `SELECT part, owner, epoch, expires FROM reef_leases WHERE expires > now() ORDER BY part`)
	if err != nil {
		return nil, fmt.Errorf("cluster: leases: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Lease, error) {
		var x Lease
		err := r.Scan(&x.Partition, &x.Owner, &x.Epoch, &x.Expires)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: leases: %w", err)
	}
	return out, nil
}

// split returns the partitions and epochs of leases, as the statements' arrays.
func split(leases []Lease) (parts []int32, epochs []int64) {
	for _, x := range leases {
		parts = append(parts, int32(x.Partition))
		epochs = append(epochs, x.Epoch)
	}
	return parts, epochs
}

// RenewAll extends node's live leases among held in one statement and returns those it
// extended; a lease missing from the answer expired or moved (fenced).
func (l *Leases) RenewAll(ctx context.Context, node string, held []Lease) ([]Lease, error) {
	if len(held) == 0 {
		return nil, nil
	}
	parts, epochs := split(held)
	rows, err := l.pool.Query(ctx, `UPDATE reef_leases AS l SET expires = now() + $4::interval
		FROM unnest($2::int[], $3::bigint[]) AS h(part, epoch)
		WHERE l.part = h.part AND l.epoch = h.epoch AND l.owner = $1 AND l.expires > now()
		RETURNING l.part, l.owner, l.epoch, l.expires`, node, parts, epochs, l.ttl.String())
	if err != nil {
		return nil, fmt.Errorf("cluster: renew: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Lease, error) {
		var x Lease
		err := r.Scan(&x.Partition, &x.Owner, &x.Epoch, &x.Expires)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: renew: %w", err)
	}
	return out, nil
}

// Release ends node's leases at once (a clean stop, or a partition handed to another node):
// the next owner takes them without waiting for them to expire, with a new epoch.
func (l *Leases) Release(ctx context.Context, node string, leases []Lease) error {
	if len(leases) == 0 {
		return nil
	}
	parts, epochs := split(leases)
	_, err := l.pool.Exec(ctx, `UPDATE reef_leases AS l SET expires = now()
		FROM unnest($2::int[], $3::bigint[]) AS h(part, epoch)
		WHERE l.part = h.part AND l.epoch = h.epoch AND l.owner = $1`, node, parts, epochs)
	if err != nil {
		return fmt.Errorf("cluster: release: %w", err)
	}
	return nil
}

// Leave removes node from the members (a clean stop): the others plan without it at once.
func (l *Leases) Leave(ctx context.Context, node string) error {
	if _, err := l.pool.Exec(ctx, `DELETE FROM reef_members WHERE node = $1`, node); err != nil {
		return fmt.Errorf("cluster: leave: %w", err)
	}
	return nil
}

// FenceAll is Fence for several leases in one statement: it returns the partitions whose
// lease is still live (locked FOR SHARE until the transaction ends, like Fence); the others
// moved on. An error other than a lost lease is the statement's (a serialization failure:
// Update runs fn again).
func FenceAll(tx persistence.Tx, leases []Lease) (map[int]bool, error) {
	ctx, q, ok := postgres.Underlying(tx)
	if !ok {
		return nil, errors.New("cluster: fence: not a transaction of the PostgreSQL store")
	}
	live := map[int]bool{}
	if len(leases) == 0 {
		return live, nil
	}
	parts, epochs := split(leases)
	rows, err := q.Query(ctx, `SELECT l.part FROM reef_leases l
		JOIN unnest($2::int[], $3::bigint[]) AS h(part, epoch) ON l.part = h.part AND l.epoch = h.epoch
		WHERE l.owner = $1 AND l.expires > clock_timestamp() FOR SHARE OF l`, leases[0].Owner, parts, epochs)
	if err != nil {
		return nil, fmt.Errorf("cluster: fence: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("cluster: fence: %w", err)
	}
	for _, p := range got {
		live[int(p)] = true
	}
	return live, nil
}
