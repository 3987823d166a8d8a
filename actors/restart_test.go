package actors_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
)

// Restarts of the Gateway's children: a Router or Storage that panics is restarted by the
// Gateway (actors/doc.go, Supervision) and must rebuild what it needs from its props and the
// store, so the gateway keeps answering.

var token = regexp.MustCompile(`msg-[a-z0-9-]+`)

// echoScript answers every message with "re: <its msg-... token>"; the first message with
// "slow" in it hangs instead (it is answered when it runs again), and reports on hung.
func echoScript(hung chan<- struct{}) *fakellm.Script {
	var slow atomic.Int32
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		tok := token.FindString(lastUser(r))
		if strings.Contains(tok, "slow") && slow.Add(1) == 1 {
			hung <- struct{}{}
			return fakellm.Reply{Hang: true}
		}
		return fakellm.Reply{Text: "re: " + tok}
	}
	return script
}

// pendingSessions lists the sessions the store holds unanswered inbox entries or unsent replies for.
func pendingSessions(t *testing.T, h *harness) []string {
	t.Helper()
	var keys []string
	if err := h.store.View(func(r persistence.Reader) (err error) {
		keys, err = r.PendingSessions()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// expectAnswers waits for a reply to each token in want, and fails on a reply to anything
// else or a second reply to one.
func expectAnswers(t *testing.T, h *harness, want ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, w := range want {
		left["re: "+w] = true
	}
	for len(left) > 0 {
		var out messages.Outbound
		select {
		case out = <-h.ch.Sent:
		case <-time.After(testutil.Timeout):
			t.Fatalf("no reply within %s; still waiting for %v", testutil.Timeout, slices.Sorted(mapKeys(left)))
		}
		if !left[out.Text] {
			t.Fatalf("reply %q to chat %s: not expected (a second answer, or one to nothing)", out.Text, out.ChatID)
		}
		delete(left, out.Text)
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// expectNoMoreReplies fails on any reply sent so far that no test step asked for.
func expectNoMoreReplies(t *testing.T, h *harness) {
	t.Helper()
	for {
		select {
		case out := <-h.ch.Sent:
			t.Errorf("extra reply %q to chat %s", out.Text, out.ChatID)
		default:
			return
		}
	}
}

// TestRouterRestartKeepsAnswering: the Router panics in the middle of traffic (one run in
// flight, more messages arriving while the Gateway's backoff holds it). Every message
// accepted before and after is answered exactly once, the run in flight included (its
// Session was stopped with the Router and is respawned from its inbox), and the Sessions the
// restarted Router spawns still passivate when idle.
func TestRouterRestartKeepsAnswering(t *testing.T) {
	hung := make(chan struct{}, 1)
	h := newHarness(t, harnessOpts{script: echoScript(hung), idle: 500 * time.Millisecond})

	for _, c := range []string{"b0", "b1", "b2"} {
		h.say(c, "msg-before-"+c)
	}
	expectAnswers(t, h, "msg-before-b0", "msg-before-b1", "msg-before-b2")
	h.say("slow", "msg-slow")
	testutil.Receive(t, hung)
	// Only the hung run is unanswered: no reply above is sent again by a respawned Session.
	waitFor(t, func() bool { return slices.Equal(pendingSessions(t, h), []string{h.key("slow")}) })

	h.rt.CrashRouter()
	for _, c := range []string{"a0", "a1", "b0"} {
		h.say(c, "msg-after-"+c) // accepted while the Router waits for its restart
	}
	expectAnswers(t, h, "msg-slow", "msg-after-a0", "msg-after-a1", "msg-after-b0")
	h.say("a2", "msg-after-a2")
	expectAnswers(t, h, "msg-after-a2")

	// The restarted Router sweeps: every Session goes once idle.
	waitFor(t, func() bool { return h.rt.LiveSessions() == 0 })
	if keys := pendingSessions(t, h); len(keys) != 0 {
		t.Errorf("sessions %v still have pending work", keys)
	}
	expectNoMoreReplies(t, h)
}

// TestRouterRestartStartsQueuedSubagent: with maxConcurrent 1, one child runs and one waits
// for the slot when the Router panics. The restart stops both children's Sessions; the
// restarted Router rebuilds its gate from the store, the waiting child still runs, and the
// parent answers once after both ended.
func TestRouterRestartStartsQueuedSubagent(t *testing.T) {
	slow, started, release := heldTool("slow", "slow done")
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req) && lastTool(req) == "":
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case isChild(req):
			return fakellm.Reply{Text: "done " + taskOf(req)}
		case len(completions(req)) > 0:
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: "both done"}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		case lastTool(req) != "": // (a run resumed after its yield asks the model again)
			return fakellm.Reply{Text: "NO_REPLY"}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("a", subagent.ToolSpawn, map[string]string{"task": "first", "label": "First"}),
			call("b", subagent.ToolSpawn, map[string]string{"task": "second", "label": "Second"})}}
	}
	h := subHarness(t, script, func(a *actors.Agent) { a.Subagents.MaxConcurrent = 1 }, slow)
	h.say("42", "two")
	testutil.Receive(t, started) // one child holds the only slot
	waitFor(t, func() bool {
		var queued bool
		for _, l := range links(t, h) {
			queued = queued || l.Status == messages.SubagentQueued
		}
		return queued && !slices.Contains(pendingSessions(t, h), h.key("42")) // the parent's run is recorded
	})

	h.rt.CrashRouter()
	waitFor(t, func() bool { return h.rt.LiveSessions() >= 0 }) // the Router answers again: restarted
	close(release)
	if got := h.reply(); got.Text != "both done" {
		t.Fatalf("the parent answered %q, want %q", got.Text, "both done")
	}
	waitFor(t, func() bool {
		for _, l := range links(t, h) {
			if l.Status != messages.SubagentCompleted {
				return false
			}
		}
		return true
	})
	expectNoMoreReplies(t, h)
}

// TestStorageRestartCommitsPending: Storage panics while a commit runs and more writes wait
// for the next one. The restart commits the waiting writes (their callers are answered),
// and messages before and after are answered exactly once.
func TestStorageRestartCommitsPending(t *testing.T) {
	hung := make(chan struct{}, 1)
	h := newHarness(t, harnessOpts{script: echoScript(hung)})
	h.say("b0", "msg-before-b0")
	expectAnswers(t, h, "msg-before-b0")

	hold, inCommit := make(chan struct{}), make(chan struct{})
	first := h.rt.WriteAsync(func(tx persistence.Tx) error {
		close(inCommit)
		<-hold // the commit runs while the rest arrive: they wait in Storage
		_, err := tx.MarkSeen("restart:first", time.Now())
		return err
	})
	<-inCommit
	var waiting []<-chan error
	for _, id := range []string{"restart:second", "restart:third"} {
		waiting = append(waiting, h.rt.WriteAsync(func(tx persistence.Tx) error {
			_, err := tx.MarkSeen(id, time.Now())
			return err
		}))
	}
	during := make(chan error, 1)
	go func() { // a message arriving meanwhile: its accept waits in Storage too
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
		defer cancel()
		during <- h.ch.Inject(ctx, messages.Inbound{ChatID: "m0", Text: "msg-during-m0"})
	}()
	h.rt.CrashStorage() // after the two writes: they are pending when it panics
	close(hold)
	if err := testutil.Receive(t, during); err != nil {
		t.Fatalf("the message sent during the restart was not accepted: %v", err)
	}
	expectAnswers(t, h, "msg-during-m0")
	for i, done := range append([]<-chan error{first}, waiting...) {
		if err := testutil.Receive(t, done); err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if err := h.store.View(func(r persistence.Reader) error {
		for _, id := range []string{"restart:first", "restart:second", "restart:third"} {
			if seen, err := r.Seen(id); err != nil || !seen {
				t.Errorf("%s not committed (err %v)", id, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	h.say("a0", "msg-after-a0")
	h.say("b0", "msg-after-b0")
	expectAnswers(t, h, "msg-after-a0", "msg-after-b0")
	waitFor(t, func() bool { return len(pendingSessions(t, h)) == 0 })
	expectNoMoreReplies(t, h)
}
