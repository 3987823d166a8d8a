package actors

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// lockedBuffer is a log sink the test reads while Storage writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStorageWaitsOutADatabaseOutage: Storage on PostgreSQL whose connections are cut (a
// TCP proxy that closes them and refuses new ones) answers none of the writes sent meanwhile,
// neither done nor failed, reports the outage, and commits them all once the database is
// back, each once and in order; a COMMIT whose answer the cut lost counts once too. The
// outage is logged once when it begins and once when it ends, not per attempt.
func TestStorageWaitsOutADatabaseOutage(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	store, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	logs := &lockedBuffer{}
	var health storageHealth
	health.watch(store)
	system := actor.NewActorSystem()
	defer system.Shutdown()
	pid := system.Root.Spawn(storageProps(store, nil, &health, zerolog.New(logs)))
	defer system.Root.Stop(pid)

	answers := make(chan error, 100)
	write := func(i int) {
		system.Root.Send(pid, &storeWrite{
			Apply: func(tx persistence.Tx) error {
				_, err := tx.AppendInbox("k", messages.Inbound{Text: fmt.Sprint(i)})
				return err
			},
			Done: func(err error) { answers <- err },
		})
	}
	answered := func(n int) {
		t.Helper()
		for range n {
			select {
			case err := <-answers:
				if err != nil {
					t.Fatalf("a write failed: %v\nlogs:\n%s", err, logs)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("writes not answered after the database came back\nlogs:\n%s", logs)
			}
		}
	}
	up := func() bool { return !health.down() }

	write(0)
	answered(1)
	proxy.Cut()
	for i := 1; i <= 10; i++ {
		write(i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for up() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // bounded polling of the published state
	}
	if h := health.p.Load(); h == nil || h.Up || h.Reason == "" || h.Since.IsZero() {
		t.Fatalf("storage health during the outage: %+v; want down, since when, why", h)
	}
	for i := 11; i <= 20; i++ { // more writes arrive during the outage: they wait behind
		write(i)
	}
	time.Sleep(2 * retryMax) // several attempts fail meanwhile
	select {
	case err := <-answers:
		t.Fatalf("a write was answered (%v) while the database was unreachable; it must wait", err)
	default:
	}
	proxy.Restore()
	answered(20)
	for deadline := time.Now().Add(5 * time.Second); !up() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // the answers go out just before Storage hears of its commit
	}
	if !up() {
		t.Errorf("storage health after the outage: %+v; want up", health.p.Load())
	}
	l := logs.String()
	if a, b := strings.Count(l, "storage unavailable"), strings.Count(l, "storage is back"); a != 1 || b != 1 {
		t.Errorf("the outage logged %d times as beginning and %d as ending; want once each, not per attempt:\n%s", a, b, l)
	}

	// The connection breaks after the server took a COMMIT: counted once all the same. The
	// commit waits to learn what became of it; past slowCommit Storage shows the outage.
	proxy.CutAt(pgtest.AfterCommit)
	restored := make(chan struct{})
	go func() {
		defer close(restored)
		time.Sleep(slowCommit + 2*time.Second)
		proxy.Restore()
	}()
	for i := 21; i <= 25; i++ {
		write(i)
	}
	for up() {
		select {
		case <-restored:
			t.Fatalf("storage health stayed up while a commit waited %v for the database", slowCommit+2*time.Second)
		case <-time.After(5 * time.Millisecond): // bounded polling of the published state
		}
	}
	answered(5)

	var got []string
	if err := store.View(func(r persistence.Reader) error {
		items, err := r.Inbox("k")
		for _, it := range items {
			got = append(got, it.Text)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 0; i <= 25; i++ {
		want = append(want, fmt.Sprint(i))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("inbox %v; want each write once, in order: %v", got, want)
	}
	l = logs.String()
	if n, m := strings.Count(l, "storage unavailable"), strings.Count(l, "storage is back"); n != m {
		t.Errorf("%d outages began but %d ended in the log:\n%s", n, m, l)
	}
	if strings.Contains(l, "write failed") {
		t.Errorf("a write was logged failed:\n%s", l)
	}
}
