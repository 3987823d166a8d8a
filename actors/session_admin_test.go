package actors_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// TestSessionAdminResetAndDelete: the Sessions page's reset works on a live session (as
// /reset: the model sees nothing before it, nobody is messaged) and on a stored one; delete
// removes a stored session and refuses a live one.
func TestSessionAdminResetAndDelete(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	defer h.stop()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	h.say("c1", "hello")
	h.reply()
	live := h.key("c1")
	if err := h.rt.SessionAdmin(ctx, live, actors.SessionReset); err != nil {
		t.Fatal(err)
	}
	resetSnapshot := func(key string) bool {
		var snaps []persistence.Snapshot
		h.store.View(func(r persistence.Reader) (err error) { snaps, err = r.Snapshots(key); return err })
		return len(snaps) > 0 && snaps[len(snaps)-1].Kind == persistence.SnapshotReset
	}
	for deadline := time.Now().Add(testutil.Timeout); !resetSnapshot(live); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the live session was not reset")
		}
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("the reset messaged the chat: %q", out.Text)
	case <-time.After(200 * time.Millisecond):
	}
	if err := h.rt.SessionAdmin(ctx, live, actors.SessionDelete); !errors.Is(err, actors.ErrSessionLive) {
		t.Errorf("deleting a live session: %v", err)
	}

	const stored = "agent:main:fake:direct:stored"
	if err := h.rt.Write(ctx, func(tx persistence.Tx) error {
		if err := tx.PutSession(persistence.SessionInfo{Key: stored, AgentID: "main", Channel: "fake", Created: time.Now()}); err != nil {
			return err
		}
		_, err := tx.AppendMessages(stored, messages.ChatMessage{Role: messages.RoleUser, Content: "old"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.rt.SessionAdmin(ctx, stored, actors.SessionReset); err != nil || !resetSnapshot(stored) {
		t.Fatalf("reset of a stored session: %v (reset snapshot: %v)", err, resetSnapshot(stored))
	}
	if err := h.rt.SessionAdmin(ctx, stored, actors.SessionDelete); err != nil {
		t.Fatal(err)
	}
	var ok bool
	h.store.View(func(r persistence.Reader) (err error) { _, ok, err = r.Session(stored); return err })
	if ok {
		t.Error("the deleted session is still stored")
	}
	if err := h.rt.SessionAdmin(ctx, stored, actors.SessionDelete); !errors.Is(err, actors.ErrNoSession) {
		t.Errorf("deleting it again: %v", err)
	}
	if err := h.rt.SessionAdmin(ctx, stored, "explode"); err == nil {
		t.Error("an unknown action was accepted")
	}
}
