package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	"github.com/reefgw/reef/persistence/storetest"
)

func open(t *testing.T, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store { return open(t, pgtest.URL(t)) })
}

// TestConcurrentWritersTwoStores runs read-modify-write Updates from two stores (two reef
// processes) on one database: SERIALIZABLE plus running fn again on a conflict loses no
// increment and hands out every seq once.
func TestConcurrentWritersTwoStores(t *testing.T) {
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	const perWorker, workers = 15, 3
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	for _, s := range []*postgres.Store{a, b} {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perWorker {
					err := s.Update(func(tx persistence.Tx) error {
						v, _, err := tx.Get("counter", "n")
						if err != nil {
							return err
						}
						n, _ := strconv.Atoi(string(v))
						if err := tx.Put("counter", "n", []byte(strconv.Itoa(n+1))); err != nil {
							return err
						}
						_, err = tx.AppendInbox("k", messages.Inbound{Text: "x"})
						return err
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := 2 * workers * perWorker
	err := a.View(func(r persistence.Reader) error {
		v, _, err := r.Get("counter", "n")
		if err != nil {
			return err
		}
		if string(v) != strconv.Itoa(want) {
			t.Errorf("counter = %s; want %d (an increment was lost)", v, want)
		}
		in, err := r.Inbox("k")
		if err != nil {
			return err
		}
		if len(in) != want || in[0].Seq != 1 || in[len(in)-1].Seq != uint64(want) {
			t.Errorf("inbox has %d items, seqs %d..%d; want %d, 1..%d", len(in), in[0].Seq, in[len(in)-1].Seq, want, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestScanPages scans a bucket larger than one page while fn reads through the same
// transaction, and scans a prefix that ends in 0xff bytes.
func TestScanPages(t *testing.T) {
	s := open(t, pgtest.URL(t))
	defer s.Close()
	const n = 700
	err := s.Update(func(tx persistence.Tx) error {
		for i := range n {
			if err := tx.Put("big", fmt.Sprintf("k%04d", i), []byte(strconv.Itoa(i))); err != nil {
				return err
			}
		}
		for _, k := range []string{"\xff", "\xff\xff", "\xff\xffa", "\xfe"} {
			if err := tx.Put("edge", k, []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(r persistence.Reader) error {
		i := 0
		err := r.Scan("big", "k", func(k string, v []byte) error {
			if want := fmt.Sprintf("k%04d", i); k != want || string(v) != strconv.Itoa(i) {
				t.Fatalf("key %d = %q %q; want %q", i, k, v, want)
			}
			if _, ok, err := r.Get("big", k); !ok || err != nil { // the transaction is usable inside fn
				t.Fatalf("Get inside Scan = %v, %v", ok, err)
			}
			i++
			return nil
		})
		if i != n {
			t.Errorf("Scan saw %d keys; want %d", i, n)
		}
		var edge []string
		err2 := r.Scan("edge", "\xff", func(k string, _ []byte) error { edge = append(edge, k); return nil })
		if d := cmp.Diff([]string{"\xff", "\xff\xff", "\xff\xffa"}, edge); d != "" {
			t.Errorf("Scan(edge, 0xff) (-want +got):\n%s", d)
		}
		return errors.Join(err, err2)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNewerSchemaRefused: a database written by a newer reef is refused, and left alone.
func TestNewerSchemaRefused(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	if _, err := s.Pool().Exec(context.Background(), "UPDATE reef_meta SET value = '99' WHERE name = 'schema'"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "store format 99, which needs a newer reef") {
		t.Fatalf("Open of a schema-99 database = %v; want a refusal naming the version", err)
	}
}

// TestURLNotInErrors: an unparsable URL's password is not in the error.
func TestURLNotInErrors(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://reef:s3cretpw@127.0.0.1:notaport/x", postgres.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cretpw") {
		t.Fatalf("Open error = %v; want an error without the password", err)
	}
}

// TestExclusive: a second exclusive store on the database fails with ErrLocked until the
// first is closed; a store that is not exclusive opens beside it.
func TestExclusive(t *testing.T) {
	url := pgtest.URL(t)
	first, err := postgres.Open(context.Background(), url, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(context.Background(), url, postgres.Options{Exclusive: true}); !errors.Is(err, persistence.ErrLocked) {
		t.Fatalf("second exclusive Open = %v; want persistence.ErrLocked", err)
	}
	open(t, url).Close()
	first.Close()
	again, err := postgres.Open(context.Background(), url, postgres.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("exclusive Open after Close = %v", err)
	}
	again.Close()
}

// TestCheck: Check reports a fresh database as fine, a used one with its schema, and a
// damaged one (a table dropped) as a problem.
func TestCheck(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	h, err := postgres.Check(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if h.VersionNum < postgres.MinServerVersion || len(h.MissingTables) != len(postgres.Tables)+1 || len(h.Problems()) != 0 {
		t.Errorf("fresh database: %+v, problems %q; want version >= 15, every table missing, no problem", h, h.Problems())
	}
	if h.ClockSkew > time.Second || h.ClockSkew < -time.Second {
		t.Errorf("clock skew against a local database = %v", h.ClockSkew)
	}
	s := open(t, url)
	defer s.Close()
	if h, err = postgres.Check(ctx, url); err != nil || h.Schema != postgres.SchemaVersion || len(h.Problems()) != 0 {
		t.Errorf("after Open: %+v, %v, problems %q; want schema %d, no problem", h, err, h.Problems(), postgres.SchemaVersion)
	}
	if _, err := s.Pool().Exec(ctx, "DROP TABLE reef_outbox"); err != nil {
		t.Fatal(err)
	}
	h, err = postgres.Check(ctx, url)
	if err != nil || len(h.Problems()) != 1 || !strings.Contains(h.Problems()[0], "reef_outbox") {
		t.Errorf("a dropped table: %+v, %v, problems %q; want one naming reef_outbox", h, err, h.Problems())
	}
	h.ClockSkew = -5 * time.Second
	if p := h.Problems(); len(p) != 2 || !strings.Contains(p[1], "clock") {
		t.Errorf("5 s of skew: problems %q; want the clock named", p)
	}
}
