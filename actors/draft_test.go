package actors_test

import (
	"time"

	"slices"
	"testing"

	"github.com/reefgw/reef/internal/testutil"

	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// waitShown waits until the chat shows exactly want.
func waitShown(t *testing.T, ed *fake.Editable, chat string, want ...string) {
	t.Helper()
	waitFor(t, func() bool { return slices.Equal(ed.Shown(chat), want) })
}

func waitFinal(t *testing.T, h *harness) {
	t.Helper()
	for ev := range h.ch.Events {
		if ev.Kind == messages.TurnFinal {
			return
		}
	}
}

// TestDraftBecomesTheReply: on a platform that can edit, a run shows a draft that the reply
// replaces; a silent run leaves nothing behind.
func TestDraftBecomesTheReply(t *testing.T) {
	ed := fake.NewEditable()
	h := newHarness(t, harnessOpts{editable: ed, script: fakellm.NewScript(
		fakellm.Reply{Text: "the answer"}, fakellm.Reply{Text: "NO_REPLY"})})
	h.say("1", "question")
	waitShown(t, ed, "1", "the answer")
	h.say("1", "say nothing")
	waitFinal(t, h)
	waitFinal(t, h)
	waitShown(t, ed, "1", "the answer")
}

// TestResendAfterCrashIsAnEdit: a reply delivered just before a crash (its outbox row not yet
// cleared) is delivered again after the restart as an edit of the same draft, so the user
// still sees it once.
func TestResendAfterCrashIsAnEdit(t *testing.T) {
	ed := fake.NewEditable()
	h := newHarness(t, harnessOpts{editable: ed, script: fakellm.NewScript(fakellm.Reply{Text: "only once"})})
	h.say("1", "question")
	waitShown(t, ed, "1", "only once")
	waitFinal(t, h) // the run is over: nothing of it is still cleaning up
	key := h.key("1")
	// put back what a kill between delivery and the outbox commit leaves behind
	ids := ed.IDs("1")
	if err := h.store.Update(func(tx persistence.Tx) error {
		if _, err := tx.AppendOutbox(key, messages.Outbound{Channel: "fake", ChatID: "1", Text: "only once", SessionKey: key}); err != nil {
			return err
		}
		return tx.Put("drafts", key, []byte("1\n"+ids[0]))
	}); err != nil {
		t.Fatal(err)
	}
	edits := ed.Edits
	h.stop()

	h2 := newHarness(t, harnessOpts{editable: ed, dbPath: h.dbPath})
	waitFor(t, func() bool {
		var n int
		h2.store.View(func(r persistence.Reader) error { out, _ := r.Outbox(key); n = len(out); return nil })
		return n == 0
	})
	if got := ed.Shown("1"); !slices.Equal(got, []string{"only once"}) {
		t.Fatalf("after the resend the chat shows %q, want the reply once", got)
	}
	if ed.Edits != edits {
		t.Errorf("the resend changed a message (%d edits, want %d)", ed.Edits, edits)
	}
}

// startRunOnClock starts a run in chat "1" of an editable platform on a fake clock, its model
// call held by the gate; status is the /status answer shown after the run started.
func startRunOnClock(t *testing.T) (clock *testutil.Clock, g *gate, ed *fake.Editable, h *harness, status string) {
	clock = testutil.NewClock(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	g, script := newGate(t)
	ed = fake.NewEditable()
	h = newHarness(t, harnessOpts{editable: ed, script: script, clock: clock})
	h.say("1", "question")
	g.next()
	return clock, g, ed, h, h.settled("1") // answered after the run started, so shown after any draft
}

// TestRunShownAfterDelay: a run's draft appears only once the run has gone on for the show
// delay (quick answers make their own draft), and the reply then replaces it.
func TestRunShownAfterDelay(t *testing.T) {
	clock, g, ed, _, status := startRunOnClock(t)
	waitShown(t, ed, "1", status) // not ("…", status): no draft before the delay
	clock.Advance(500 * time.Millisecond)
	waitShown(t, ed, "1", status, "…")
	g.answer(fakellm.Reply{Text: "the answer"})
	waitShown(t, ed, "1", status, "the answer")
}

// TestTypingKeptWhileRunGoesOn: a shown run's typing indicator is sent again every 4 s
// (Telegram clears it after 5), and no more once the run has answered.
func TestTypingKeptWhileRunGoesOn(t *testing.T) {
	clock, g, ed, h, status := startRunOnClock(t)
	if n := ed.Typings("1"); n != 0 {
		t.Fatalf("%d typing actions before the show delay", n)
	}
	clock.Advance(500 * time.Millisecond)
	if out := h.reply(); out.Text != "…" {
		t.Fatalf("sent %q, want the draft", out.Text)
	}
	waitFor(t, func() bool { return ed.Typings("1") == 1 })
	for want := 2; want <= 4; want++ {
		clock.Advance(4 * time.Second)
		waitFor(t, func() bool { return ed.Typings("1") == want })
	}
	g.answer(fakellm.Reply{Text: "the answer"})
	waitShown(t, ed, "1", status, "the answer")
	h.rt.Health() // the Connector has handled the reply by now
	if at, ok := clock.Next(); ok && at.Sub(clock.Now()) <= 4*time.Second {
		t.Errorf("a wake-up is still pending %v after the answer", at.Sub(clock.Now()))
	}
	clock.Advance(12 * time.Second)
	h.rt.Health()
	if n := ed.Typings("1"); n != 4 {
		t.Errorf("%d typing actions, want 4: none after the answer", n)
	}
}
