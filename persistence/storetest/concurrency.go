package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// testConcurrentViews runs Views while one goroutine commits Updates that each append two
// entries and one inbox item: every View must see whole Updates only.
func testConcurrentViews(t *testing.T, s persistence.Store) {
	const updates, readers = 40, 4
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := s.View(checkWhole); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range updates {
		err := s.Update(func(tx persistence.Tx) error {
			if _, err := tx.AppendMessages("k", msg(messages.RoleUser, "q"), msg(messages.RoleAssistant, "a")); err != nil {
				return err
			}
			_, err := tx.AppendInbox("k", inbound(fmt.Sprint(i)))
			return err
		})
		if err != nil {
			t.Errorf("Update %d: %v", i, err)
			break
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := s.View(checkWhole); err != nil {
		t.Error(err)
	}
}

// checkWhole checks that a View sees a state made of whole Updates of testConcurrentViews.
func checkWhole(r persistence.Reader) error {
	msgs, err := r.Messages("k", 0)
	if err != nil {
		return err
	}
	in, err := r.Inbox("k")
	if err != nil {
		return err
	}
	if len(msgs) != 2*len(in) {
		return fmt.Errorf("View saw %d entries and %d inbox items; want 2 entries per item", len(msgs), len(in))
	}
	for i, m := range msgs {
		if i > 0 && m.Seq <= msgs[i-1].Seq {
			return fmt.Errorf("View saw seq %d after %d", m.Seq, msgs[i-1].Seq)
		}
	}
	return nil
}

func testTxAfterEnd(t *testing.T, s persistence.Store) {
	var leakedTx persistence.Tx
	var leakedR persistence.Reader
	update(t, s, func(tx persistence.Tx) error { leakedTx = tx; return tx.PutSession(info("k")) })
	view(t, s, func(r persistence.Reader) error { leakedR = r; return nil })
	if _, err := leakedTx.AppendMessages("k", msg(messages.RoleUser, "late")); err == nil {
		t.Errorf("AppendMessages on an ended Tx: got nil error")
	}
	if err := leakedTx.PutSession(info("late")); err == nil {
		t.Errorf("PutSession on an ended Tx: got nil error")
	}
	if _, err := leakedR.Messages("k", 0); err == nil {
		t.Errorf("Messages on an ended Reader: got nil error")
	}
	if _, _, err := leakedR.Session("k"); err == nil {
		t.Errorf("Session on an ended Reader: got nil error")
	}
	if _, err := leakedR.Snapshots("k"); err == nil {
		t.Errorf("Snapshots on an ended Reader: got nil error")
	}
	st := dump(t, s, []string{"k", "late"}, nil)
	if len(st.Sessions) != 1 || len(st.Keys["k"].Messages) != 0 {
		t.Errorf("writes through an ended Tx were kept: %+v", st)
	}
}

func testClosed(t *testing.T, s persistence.Store) {
	update(t, s, func(tx persistence.Tx) error { return tx.PutSession(info("k")) })
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err := s.Update(func(tx persistence.Tx) error { return tx.PutSession(info("x")) })
	if !errors.Is(err, persistence.ErrClosed) {
		t.Errorf("Update after Close = %v; want persistence.ErrClosed", err)
	}
	err = s.View(func(persistence.Reader) error { return nil })
	if !errors.Is(err, persistence.ErrClosed) {
		t.Errorf("View after Close = %v; want persistence.ErrClosed", err)
	}
}
