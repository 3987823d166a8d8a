package actors_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// TestPoisonMessageIsSetAside: a message that makes the Session itself panic every time is
// set aside after two attempts (the sender is told once), instead of crashing the session
// on every restart; the conversation then goes on.
func TestPoisonMessageIsSetAside(t *testing.T) {
	var poisoned atomic.Bool
	var crashes atomic.Int32
	now := func() time.Time {
		if poisoned.Load() && calledFrom("actors.(*Session).maybeStartTurn") {
			crashes.Add(1)
			panic("injected: this message crashes the session")
		}
		return time.Now()
	}
	script := fakellm.NewScript()
	h := newHarness(t, harnessOpts{script: script, now: now})

	poisoned.Store(true)
	h.say("1", "POISON")
	if out := h.reply(); !strings.HasPrefix(out.Text, "Sorry, I could not handle that message") {
		t.Fatalf("reply = %q, want the dead-letter notice", out.Text)
	}
	if n := crashes.Load(); n != 2 {
		t.Errorf("the session crashed %d times, want 2", n)
	}
	poisoned.Store(false)
	h.say("1", "hello")
	if out := h.reply(); out.Text != "ok" {
		t.Fatalf("reply = %q, want the conversation to go on", out.Text)
	}
	if n := len(script.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1 (none for the poison message)", n)
	}
	var dead, counts int
	err := h.store.View(func(r persistence.Reader) error {
		if err := r.Scan("deadletter", "", func(k string, v []byte) error {
			if strings.Contains(string(v), "POISON") {
				dead++
			}
			return nil
		}); err != nil {
			return err
		}
		return r.Scan("poison", "", func(string, []byte) error { counts++; return nil })
	})
	if err != nil || dead != 1 || counts != 0 {
		t.Errorf("dead letters %d, crash counts left %d (err %v), want 1 and 0", dead, counts, err)
	}
	h.expectNoInbox("1")
}
