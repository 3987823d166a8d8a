package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// increment adds one to the counter in an Update.
func increment(s *postgres.Store) error {
	return s.Update(func(tx persistence.Tx) error {
		v, _, err := tx.Get("counter", "n")
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(string(v))
		return tx.Put("counter", "n", []byte(strconv.Itoa(n+1)))
	})
}

// counter reads the counter straight from the database (not through the proxy).
func counter(t *testing.T, s *postgres.Store) int {
	t.Helper()
	var n int
	if err := s.View(func(r persistence.Reader) error {
		v, _, err := r.Get("counter", "n")
		n, _ = strconv.Atoi(string(v))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUnreachableIsUnavailable: while the database cannot be reached (its connections cut,
// new ones refused), Update and View fail with persistence.ErrUnavailable and keep nothing;
// once it is back the same store works again.
func TestUnreachableIsUnavailable(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	s, ref := open(t, url), open(t, direct)
	defer s.Close()
	defer ref.Close()
	if err := increment(s); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	if err := increment(s); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("Update with the database unreachable: %v; want ErrUnavailable", err)
	}
	if err := s.View(func(persistence.Reader) error { return nil }); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("View with the database unreachable: %v; want ErrUnavailable", err)
	}
	if got := counter(t, ref); got != 1 {
		t.Errorf("counter %d after a failed Update; want 1", got)
	}
	proxy.Restore()
	if err := increment(s); err != nil {
		t.Fatalf("Update after the database came back: %v", err)
	}
	if got := counter(t, ref); got != 2 {
		t.Errorf("counter %d; want 2", got)
	}
}

// TestCommitWithoutAnswer: the connection breaks while COMMIT is on its way. Update must
// tell what became of the transaction, not guess: when the server committed (its answer was
// lost) Update succeeds, so nobody runs it again; when the COMMIT never arrived it fails with
// ErrUnavailable and nothing was kept, so running it again is safe. Either way, Update waits
// for the database to answer that question (here 300 ms of outage).
func TestCommitWithoutAnswer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		point     int
		committed bool
	}{
		{"answer lost", pgtest.AfterCommit, true},
		{"commit lost", pgtest.BeforeCommit, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct := pgtest.URL(t)
			proxy, url := pgtest.NewProxy(t, direct)
			s, ref := open(t, url), open(t, direct)
			defer s.Close()
			defer ref.Close()
			proxy.CutAt(tc.point)
			go func() {
				time.Sleep(300 * time.Millisecond)
				proxy.Restore()
			}()
			err := s.Update(func(tx persistence.Tx) error {
				v, _, err := tx.Get("counter", "n")
				if err != nil {
					return err
				}
				n, _ := strconv.Atoi(string(v))
				return tx.Put("counter", "n", []byte(strconv.Itoa(n+1)))
			})
			// Update ran fn again after an aborted attempt (the database was back): the
			// counter is 1 either way, and Update reports success only when it is.
			got := counter(t, ref)
			switch {
			case err == nil && got != 1:
				t.Errorf("Update succeeded but the counter is %d; want 1", got)
			case err != nil && !errors.Is(err, persistence.ErrUnavailable):
				t.Errorf("Update: %v; want success or ErrUnavailable, never an unknown outcome", err)
			case err != nil && got != 0:
				t.Errorf("Update failed (%v) but the counter is %d: a retry would count twice", err, got)
			case tc.committed && err != nil:
				t.Errorf("the server committed but Update failed: %v", err)
			}
		})
	}
}

// TestExclusiveLockSurvivesAnOutage: a store opened Exclusive loses its lock with its
// connection when the database is unreachable; it takes it again when the database is back,
// so a second reef on the database is still refused, and the first one writes on.
func TestExclusiveLockSurvivesAnOutage(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	s, err := postgres.Open(context.Background(), url, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	proxy.Cut()
	if err := increment(s); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("Update with the database unreachable: %v; want ErrUnavailable", err)
	}
	proxy.Restore()
	if err := increment(s); err != nil { // takes the lock again first
		t.Fatalf("Update after the outage: %v", err)
	}
	other, err := postgres.Open(context.Background(), direct, postgres.Options{Exclusive: true})
	if err == nil {
		other.Close()
		t.Fatal("a second exclusive store opened after the outage: the first one lost its lock for good")
	}
	if !errors.Is(err, persistence.ErrLocked) {
		t.Errorf("second store: %v; want ErrLocked", err)
	}
}
