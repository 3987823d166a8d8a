package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// node is one reef process of a test: its own store (pool) and lease table handle.
type node struct {
	name   string
	store  *postgres.Store
	leases *cluster.Leases
}

func newNode(t *testing.T, url, name string) *node {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := cluster.New(context.Background(), s.Pool(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return &node{name: name, store: s, leases: l}
}

// reply writes one outbox row for key under lease: the row first, then the fence, so a
// fenced write proves that what the transaction wrote before the check is not kept either.
func (n *node) reply(key, text string, lease cluster.Lease) error {
	return n.store.Update(func(tx persistence.Tx) error {
		if _, err := tx.AppendOutbox(key, messages.Outbound{Text: text}); err != nil {
			return err
		}
		return cluster.Fence(tx, lease)
	})
}

// TestPausedNodeIsFenced: node a owns a partition and writes; it pauses past its lease;
// node b takes the partition over with a new epoch; a's next write (and renewal) is refused
// and keeps nothing, b's goes through.
func TestPausedNodeIsFenced(t *testing.T) {
	url := pgtest.URL(t)
	a, b := newNode(t, url, "node-a"), newNode(t, url, "node-b")
	ctx := context.Background()
	const key = "agent:main:telegram:direct:42"
	part := cluster.Partition(key, cluster.DefaultPartitions)

	la, err := a.leases.Acquire(ctx, a.name, part)
	if err != nil || la.Epoch != 1 {
		t.Fatalf("a acquires: %+v, %v; want epoch 1", la, err)
	}
	if err := a.reply(key, "from a, holding the lease", la); err != nil {
		t.Fatalf("a writes under its lease: %v", err)
	}
	if _, err := b.leases.Acquire(ctx, b.name, part); !errors.Is(err, cluster.ErrHeld) {
		t.Fatalf("b acquires a live lease of a: %v; want ErrHeld", err)
	}
	if again, err := a.leases.Acquire(ctx, a.name, part); err != nil || again.Epoch != 1 {
		t.Fatalf("a acquires its own lease again: %+v, %v; want epoch 1 (a renewal)", again, err)
	}

	// a pauses past its lease: the lease runs out (moved into the past rather than waited for).
	if _, err := a.store.Pool().Exec(ctx, "UPDATE reef_leases SET expires = now() - interval '1 second' WHERE part = $1", part); err != nil {
		t.Fatal(err)
	}
	lb, err := b.leases.Acquire(ctx, b.name, part)
	if err != nil || lb.Epoch != 2 || lb.Owner != b.name {
		t.Fatalf("b takes over: %+v, %v; want b with epoch 2", lb, err)
	}
	// a wakes up and writes with the lease it had.
	if err := a.reply(key, "from a, after losing the lease", la); !errors.Is(err, cluster.ErrFenced) {
		t.Fatalf("a writes with a moved lease: %v; want ErrFenced", err)
	}
	if _, err := a.leases.Renew(ctx, la); !errors.Is(err, cluster.ErrFenced) {
		t.Fatalf("a renews a moved lease: %v; want ErrFenced", err)
	}
	if err := b.reply(key, "from b", lb); err != nil {
		t.Fatalf("b writes under its lease: %v", err)
	}
	if _, err := b.leases.Renew(ctx, lb); err != nil {
		t.Fatalf("b renews: %v", err)
	}
	var texts []string
	err = b.store.View(func(r persistence.Reader) error {
		out, err := r.Outbox(key)
		for _, o := range out {
			texts = append(texts, o.Text)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 2 || texts[0] != "from a, holding the lease" || texts[1] != "from b" {
		t.Errorf("outbox = %q; want a's write under its lease, then b's, and nothing of a's after", texts)
	}
}

// TestFenceNeedsPostgres: Fence refuses a transaction of another store instead of passing.
func TestFenceNeedsPostgres(t *testing.T) {
	if err := cluster.Fence(nil, cluster.Lease{}); err == nil || errors.Is(err, cluster.ErrFenced) {
		t.Errorf("Fence(nil) = %v; want an error that is not ErrFenced", err)
	}
}

// TestMembers: a node is a member while its heartbeat is younger than the ttl.
func TestMembers(t *testing.T) {
	url := pgtest.URL(t)
	a, b := newNode(t, url, "node-a"), newNode(t, url, "node-b")
	ctx := context.Background()
	for _, n := range []*node{a, b} {
		if err := n.leases.Heartbeat(ctx, n.name); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := a.leases.Members(ctx); err != nil || len(got) != 2 || got[0] != "node-a" || got[1] != "node-b" {
		t.Fatalf("Members = %v, %v; want both", got, err)
	}
	if _, err := a.store.Pool().Exec(ctx, "UPDATE reef_members SET heartbeat = now() - interval '11 seconds' WHERE node = 'node-b'"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.leases.Members(ctx); err != nil || len(got) != 1 || got[0] != "node-a" {
		t.Fatalf("Members after b's heartbeat stopped = %v, %v; want only node-a", got, err)
	}
}

// TestAssignEven: partitions spread evenly, and every key has one partition in range.
func TestAssignEven(t *testing.T) {
	got := cluster.Assign([]string{"c", "a", "b"}, cluster.DefaultPartitions)
	count := map[string]int{}
	for p := range cluster.DefaultPartitions {
		count[got[p]]++
	}
	if count["a"] != 86 || count["b"] != 85 || count["c"] != 85 {
		t.Errorf("partitions per node = %v; want 86, 85, 85", count)
	}
	if cluster.Assign(nil, 8) != nil {
		t.Errorf("Assign without members is not empty")
	}
	for _, k := range []string{"", "a", "agent:main:telegram:direct:42"} {
		p := cluster.Partition(k, 7)
		if p < 0 || p >= 7 || p != cluster.Partition(k, 7) {
			t.Errorf("Partition(%q, 7) = %d", k, p)
		}
	}
}
