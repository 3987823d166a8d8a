package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// TestPlanEvenAndSticky: the plan is as even as it can be, keeps what members hold within
// their share, and moves only a dead member's partitions when it leaves.
func TestPlanEvenAndSticky(t *testing.T) {
	const n = 256
	first := cluster.Plan([]string{"c", "a", "b"}, nil, n)
	count := func(plan map[int]string) map[string]int {
		c := map[string]int{}
		for p := range n {
			c[plan[p]]++
		}
		return c
	}
	if c := count(first); c["a"]+c["b"]+c["c"] != n || c["a"] < 85 || c["b"] < 85 || c["c"] < 85 {
		t.Fatalf("three members: %v; want 85 or 86 each", c)
	}
	// c dies: a and b keep what they held and share c's.
	after := cluster.Plan([]string{"a", "b"}, first, n)
	moved := 0
	for p := range n {
		if first[p] != "c" && after[p] != first[p] {
			moved++
		}
	}
	if c := count(after); moved != 0 || c["a"] != 128 || c["b"] != 128 {
		t.Errorf("after c left: %v, %d partitions of the survivors moved; want 128 each and none", c, moved)
	}
	// d joins: it gets a share, taken from the others' surplus only.
	joined := cluster.Plan([]string{"a", "b", "d"}, after, n)
	if c := count(joined); c["d"] < 85 || c["a"] < 85 || c["b"] < 85 {
		t.Errorf("after d joined: %v", c)
	}
	for p := range n {
		if joined[p] != "d" && joined[p] != after[p] {
			t.Fatalf("partition %d moved from %s to %s, not to the new member", p, after[p], joined[p])
		}
	}
	if cluster.Plan(nil, nil, n) != nil {
		t.Errorf("a plan without members")
	}
}

// testNode is a Node with its own pool, recording what it gained and lost.
type testNode struct {
	*cluster.Node
	store *postgres.Store
	mu    sync.Mutex
	owned map[int]bool
}

func startNode(t *testing.T, url, id string, n int, ttl time.Duration) *testNode {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l, err := cluster.New(context.Background(), s.Pool(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	tn := &testNode{store: s, owned: map[int]bool{}}
	tn.Node = cluster.NewNode(l, id, n, func(gained, lost []int) {
		tn.mu.Lock()
		defer tn.mu.Unlock()
		for _, p := range gained {
			if tn.owned[p] {
				panic(fmt.Sprintf("%s gained %d twice", id, p))
			}
			tn.owned[p] = true
		}
		for _, p := range lost {
			delete(tn.owned, p)
		}
	}, zerolog.Nop())
	return tn
}

func (tn *testNode) count() int {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	return len(tn.owned)
}

// rounds runs a round of every node, k times.
func rounds(k int, nodes ...*testNode) {
	for range k {
		for _, nd := range nodes {
			nd.Round(context.Background())
		}
	}
}

// TestNodesShareTakeOverAndHandOver: one node takes every partition; a second joining gets
// half, handed over (never owned by both at once); when one dies the other takes its
// partitions once their leases run out; a clean Leave hands them over at once.
func TestNodesShareTakeOverAndHandOver(t *testing.T) {
	url := pgtest.URL(t)
	const n = 16
	ttl := 3 * time.Second
	a := startNode(t, url, "a", n, ttl)
	rounds(1, a)
	if a.count() != n {
		t.Fatalf("a alone owns %d; want %d", a.count(), n)
	}
	b := startNode(t, url, "b", n, ttl)
	disjoint := func() {
		t.Helper()
		for p := range n {
			_, ina := a.Active(p)
			_, inb := b.Active(p)
			if ina && inb {
				t.Fatalf("partition %d active on both nodes", p)
			}
		}
	}
	for range 3 {
		rounds(1, b, a)
		disjoint()
	}
	if a.count() != n/2 || b.count() != n/2 {
		t.Fatalf("after b joined: a %d, b %d; want %d each", a.count(), b.count(), n/2)
	}

	// b dies (no more rounds): a takes its partitions once their leases expire, not before.
	died := time.Now()
	rounds(1, a)
	if a.count() != n/2 {
		t.Fatalf("a took b's partitions while their leases were live: %d", a.count())
	}
	for a.count() < n && time.Since(died) < 3*ttl {
		rounds(1, a)
		time.Sleep(100 * time.Millisecond)
	}
	if took := time.Since(died); a.count() != n || took > ttl+2*time.Second {
		t.Fatalf("a owns %d after %v; want all %d within the ttl (%v) and a round", a.count(), took, n, ttl)
	}
	// b's writes under its old leases are fenced; its own view expired with its clock.
	key := "agent:main:telegram:direct:1"
	if _, ok := b.Owns(key); ok {
		t.Errorf("b still thinks it owns %q after its lease ran out", key)
	}
	err := b.store.Update(func(tx persistence.Tx) error {
		lost, err := b.Fence(tx, map[string]int64{key: 0})
		if err == nil && lost[key] {
			return cluster.ErrFenced
		}
		if err == nil {
			_, err = tx.AppendOutbox(key, messages.Outbound{Text: "late"})
		}
		return err
	})
	if !errors.Is(err, cluster.ErrFenced) {
		t.Errorf("b's write after a took over: %v; want fenced", err)
	}

	// b comes back (SIGCONT): it learns its leases are gone and rejoins; then a leaves cleanly.
	rounds(4, b, a)
	if a.count() != n/2 || b.count() != n/2 {
		t.Fatalf("after b rejoined: a %d, b %d", a.count(), b.count())
	}
	if err := a.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	left := time.Now()
	rounds(1, b)
	if b.count() != n || time.Since(left) > ttl {
		t.Errorf("b owns %d after a left cleanly; want all %d at its next round", b.count(), n)
	}
}

// TestFenceByEpoch: a claim made under an older epoch of a partition is refused although the
// node holds the partition again (it re-acquired it after a lapse).
func TestFenceByEpoch(t *testing.T) {
	url := pgtest.URL(t)
	a := startNode(t, url, "a", 4, 3*time.Second)
	rounds(1, a)
	key := "k"
	epoch, ok := a.Owns(key)
	if !ok {
		t.Fatal("a does not own k")
	}
	for _, tc := range []struct {
		epoch int64
		lost  bool
	}{{epoch, false}, {0, false}, {epoch + 1, true}} {
		var lost map[string]bool
		err := a.store.Update(func(tx persistence.Tx) error {
			var err error
			lost, err = a.Fence(tx, map[string]int64{key: tc.epoch})
			return err
		})
		if err != nil || lost[key] != tc.lost {
			t.Errorf("claim under epoch %d (held: %d): lost %v, %v; want %v", tc.epoch, epoch, lost[key], err, tc.lost)
		}
	}
}

// TestCheckPartitions: a node with another partition count than the running nodes' is
// refused; once no node runs, the count may change.
func TestCheckPartitions(t *testing.T) {
	url := pgtest.URL(t)
	a := startNode(t, url, "a", 16, 3*time.Second)
	ctx := context.Background()
	l, err := cluster.New(ctx, a.store.Pool(), 3*time.Second) // the tables; a runs no round
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CheckPartitions(ctx, "a", 16); err != nil { // a is a live member now
		t.Fatal(err)
	}
	var perr *cluster.ErrPartitions
	if err := l.CheckPartitions(ctx, "b", 32); !errors.As(err, &perr) || perr.Cluster != 16 {
		t.Fatalf("32 partitions beside a live node with 16: %v; want refused", err)
	}
	if err := l.CheckPartitions(ctx, "b", 16); err != nil {
		t.Fatalf("the same count: %v", err)
	}
	for _, id := range []string{"a", "b"} {
		if err := l.Leave(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.CheckPartitions(ctx, "c", 32); err != nil {
		t.Fatalf("32 partitions once no node runs: %v", err)
	}
}
