package cluster_test

import (
	"context"
	"errors"
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

func newWork(t *testing.T, url string, ttl time.Duration) (*postgres.Store, *cluster.WorkLeases) {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w, err := cluster.NewWorkLeases(context.Background(), s.Pool(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	return s, w
}

// TestWorkLeaseMovesAndFences: a unit of work is held by one node; once its lease expired
// another node takes it with a higher epoch, and the old holder can neither renew nor write
// under it.
func TestWorkLeaseMovesAndFences(t *testing.T) {
	url := pgtest.URL(t)
	sa, a := newWork(t, url, 10*time.Second)
	sb, b := newWork(t, url, 10*time.Second)
	ctx := context.Background()
	const unit = "channel:telegram:default"

	wa, err := a.Acquire(ctx, "node-a", unit)
	if err != nil || wa.Epoch != 1 {
		t.Fatalf("a acquires: %+v, %v; want epoch 1", wa, err)
	}
	if _, err := b.Acquire(ctx, "node-b", unit); !errors.Is(err, cluster.ErrHeld) {
		t.Fatalf("b acquires a's live unit: %v; want ErrHeld", err)
	}
	if _, err := b.Acquire(ctx, "node-b", "timer"); err != nil {
		t.Fatalf("b acquires another unit: %v", err)
	}
	if wa, err = a.Renew(ctx, wa); err != nil {
		t.Fatalf("a renews: %v", err)
	}
	if _, err := sa.Pool().Exec(ctx, "UPDATE reef_work SET expires = now() - interval '1 second' WHERE name = $1", unit); err != nil {
		t.Fatal(err)
	}
	wb, err := b.Acquire(ctx, "node-b", unit)
	if err != nil || wb.Epoch != 2 || wb.Owner != "node-b" {
		t.Fatalf("b takes over: %+v, %v; want node-b with epoch 2", wb, err)
	}
	if _, err := a.Renew(ctx, wa); !errors.Is(err, cluster.ErrFenced) {
		t.Fatalf("a renews a moved lease: %v; want ErrFenced", err)
	}
	write := func(s *postgres.Store, w cluster.Work, text string) error {
		return s.Update(func(tx persistence.Tx) error {
			if _, err := tx.AppendOutbox("k", messages.Outbound{Text: text}); err != nil {
				return err
			}
			return cluster.FenceWork(tx, w)
		})
	}
	if err := write(sa, wa, "a"); !errors.Is(err, cluster.ErrFenced) {
		t.Fatalf("a writes under a moved lease: %v; want ErrFenced", err)
	}
	if err := write(sb, wb, "b"); err != nil {
		t.Fatalf("b writes under its lease: %v", err)
	}
	list, err := a.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != unit || list[0].Owner != "node-b" || !list[0].Live || list[1].Name != "timer" {
		t.Fatalf("List = %+v, %v; want the channel held by node-b, then the timer", list, err)
	}
}

// TestWorkReleaseHandsOverAtOnce: a released unit is free before its lease would expire.
func TestWorkReleaseHandsOverAtOnce(t *testing.T) {
	url := pgtest.URL(t)
	_, a := newWork(t, url, time.Hour)
	_, b := newWork(t, url, time.Hour)
	ctx := context.Background()
	wa, err := a.Acquire(ctx, "node-a", "timer")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, wa); err != nil {
		t.Fatal(err)
	}
	if wb, err := b.Acquire(ctx, "node-b", "timer"); err != nil || wb.Epoch != 2 {
		t.Fatalf("b acquires a released unit: %+v, %v; want epoch 2", wb, err)
	}
	if err := a.Release(ctx, wa); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx, "node-a", "timer"); !errors.Is(err, cluster.ErrHeld) {
		t.Fatalf("a's stale release freed b's lease: %v; want ErrHeld", err)
	}
}

// span is when a node did the work: from holding the unit to its context's end.
type span struct {
	node       string
	start, end time.Time
}

// TestHolderHandsWorkOver: three nodes ask for the same unit; one works at a time. The
// holder's database connection dies (its node is cut off): its work stops, and another node
// takes over, never overlapping. Then that holder stops gracefully and the third takes over.
func TestHolderHandsWorkOver(t *testing.T) {
	url := pgtest.URL(t)
	const ttl = 2 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var spans []span
	stores := map[string]*postgres.Store{}
	stops := map[string]context.CancelFunc{}
	started := make(chan string, 3)
	var wg sync.WaitGroup
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		s, w := newWork(t, url, ttl)
		stores[name] = s
		nodeCtx, stop := context.WithCancel(ctx)
		stops[name] = stop
		h := cluster.NewHolder(w, name, zerolog.Nop())
		wg.Go(func() {
			held, release, err := h.Hold(nodeCtx, "channel:telegram:default")
			if err != nil {
				return
			}
			defer release()
			sp := span{node: name, start: time.Now()}
			if got := h.Held(); len(got) != 1 || got[0].Owner != name {
				t.Errorf("%s: Held = %+v; want its unit", name, got)
			}
			started <- name
			<-held.Done()
			sp.end = time.Now()
			mu.Lock()
			spans = append(spans, sp)
			mu.Unlock()
		})
	}
	first := <-started
	stores[first].Pool().Close() // cut off: it cannot renew
	second := <-started
	stops[second]() // a graceful stop: the third takes over
	third := <-started
	if first == second || second == third || first == third {
		t.Fatalf("holders %s, %s, %s; want three different nodes", first, second, third)
	}
	stops[third]()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(spans) != 3 {
		t.Fatalf("spans = %+v; want 3", spans)
	}
	byNode := map[string]span{}
	for _, s := range spans {
		byNode[s.node] = s
	}
	if !byNode[first].end.Before(byNode[second].start) || !byNode[second].end.Before(byNode[third].start) {
		t.Errorf("work overlapped: %+v", spans)
	}
}
