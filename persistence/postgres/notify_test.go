package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// TestListenHearsCommittedInbox: a store opened with Notify announces an inbox entry when its
// transaction commits, to a listener on another store of the database; a rolled-back one is
// never announced, and a store without Notify announces nothing.
func TestListenHearsCommittedInbox(t *testing.T) {
	url := pgtest.URL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(notify bool) *postgres.Store {
		s, err := postgres.Open(ctx, url, postgres.Options{Notify: notify})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	listener, writer, quiet := open(false), open(true), open(false)
	heard := make(chan string, 16)
	done := make(chan error, 1)
	go func() { done <- listener.Listen(ctx, func(key string) { heard <- key }) }()
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-heard:
			if got != want {
				t.Fatalf("heard %q; want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("heard nothing; want %q", want)
		}
	}
	expect("") // connected: sweep
	write := func(s *postgres.Store, key string, fail bool) {
		err := s.Update(func(tx persistence.Tx) error {
			if _, err := tx.AppendInbox(key, messages.Inbound{Text: "hi"}); err != nil {
				return err
			}
			if fail {
				return errors.New("rolled back")
			}
			return nil
		})
		if err != nil != fail {
			t.Fatal(err)
		}
	}
	write(writer, "rolled-back", true)
	write(quiet, "no-notify", false)
	write(writer, "agent:main:telegram:direct:1", false)
	expect("agent:main:telegram:direct:1")
	select {
	case got := <-heard:
		t.Errorf("heard %q more", got)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Listen returned %v; want context.Canceled", err)
	}
}
