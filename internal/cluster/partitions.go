package cluster

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// ErrPartitions is CheckPartitions' error: this node's partition count differs from the one
// the cluster's live nodes use.
type ErrPartitions struct{ Mine, Cluster int }

func (e *ErrPartitions) Error() string {
	return fmt.Sprintf("cluster.partitions is %d on this node but %d on the cluster's running nodes: "+
		"every node must use the same number (stop every node to change it)", e.Mine, e.Cluster)
}

// CheckPartitions records n as the cluster's partition count in reef_meta, or refuses it
// when live members use another one: two counts would hash one session to two partitions,
// owned by two nodes. With no live member the record follows n (the whole cluster was
// stopped to change it). It registers node as a member in the same transaction, so two
// nodes starting together with different counts cannot both pass.
func (l *Leases) CheckPartitions(ctx context.Context, node string, n int) error {
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE reef_members IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("cluster: check partitions: %w", err)
		}
		var recorded string
		var live bool
		err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT value FROM reef_meta WHERE name = 'cluster.partitions'), ''),
			EXISTS (SELECT 1 FROM reef_members WHERE heartbeat > now() - $1::interval AND node <> $2)`, l.ttl.String(), node).Scan(&recorded, &live)
		if err != nil {
			return fmt.Errorf("cluster: check partitions: %w", err)
		}
		if have, err := strconv.Atoi(recorded); err == nil && have != n && live {
			return &ErrPartitions{Mine: n, Cluster: have}
		}
		_, err = tx.Exec(ctx, `INSERT INTO reef_meta (name, value) VALUES ('cluster.partitions', $1)
			ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`, strconv.Itoa(n))
		if err == nil {
			_, err = tx.Exec(ctx, `INSERT INTO reef_members (node, heartbeat, started) VALUES ($1, now(), now())
				ON CONFLICT (node) DO UPDATE SET heartbeat = now()`, node)
		}
		if err != nil {
			return fmt.Errorf("cluster: check partitions: %w", err)
		}
		return nil
	})
}
