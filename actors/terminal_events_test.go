package actors_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
)

// nextEvent waits for the chat's next progress event of kind.
func nextEvent(t *testing.T, h *harness, kind messages.TurnEventKind) messages.TurnEvent {
	t.Helper()
	for ev := range h.ch.Events {
		if ev.Kind == kind {
			return ev
		}
	}
	t.Fatalf("no %s event", kind)
	return messages.TurnEvent{}
}

// TestMessageDuringARunIsShownQueued: a message that arrives while a run goes is not
// answered at once; the sender's channel is told what the queue mode does with it.
func TestMessageDuringARunIsShownQueued(t *testing.T) {
	g, script := newGate(t)
	started, release := make(chan string, 1), make(chan struct{})
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{blockTool(started, release)}})
	h.say("1", "count the files")
	g.next()
	g.answer(fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", "slow", map[string]any{})}})
	testutil.Receive(t, started)
	h.say("1", "only the .go files please")
	ev := nextEvent(t, h, messages.MessageQueued)
	if ev.ChatID != "1" || !strings.Contains(ev.Label, "next step") {
		t.Errorf("queued event = %+v, want chat 1 told the run reads it at its next step", ev)
	}
	close(release)
	g.next()
	g.answer(fakellm.Reply{Text: "3 go files"})
	h.reply()
}

// TestFailedRunFinalSaysWhy: the final event of a failed run says it failed and why, so the
// terminal can exit non-zero, and its reply is marked Failed, so the terminal shows it as an
// error; a run that succeeds is not marked.
func TestFailedRunFinalSaysWhy(t *testing.T) {
	h := newHarness(t, harnessOpts{script: fakellm.NewScript(fakellm.Reply{Status: 401}, fakellm.Reply{Text: "fine"})})
	h.say("1", "hello")
	ev := nextEvent(t, h, messages.TurnFinal)
	if !ev.IsError || ev.Text == "" {
		t.Errorf("final event of a failed run = %+v, want IsError and a reason", ev)
	}
	if out := h.reply(); !out.Failed {
		t.Errorf("reply of a failed run = %+v, want Failed", out)
	}
	h.say("1", "again")
	if ev := nextEvent(t, h, messages.TurnFinal); ev.IsError || ev.Text != "" {
		t.Errorf("final event of a good run = %+v, want no error", ev)
	}
	if out := h.reply(); out.Failed {
		t.Errorf("reply of a good run = %+v, want it not Failed", out)
	}
}

// TestOwnerOnlyRefusalNamesTheSender: with allowFrom ["*"] everyone may talk but nobody is
// the owner; cron's refusal says so and names the id that would make the sender the owner.
func TestOwnerOnlyRefusalNamesTheSender(t *testing.T) {
	script := fakellm.NewScript(
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("c1", "cron", map[string]any{"action": "list"})}},
		fakellm.Reply{Text: "I may not"})
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{cron.New()},
		access: &access.Rules{DMPolicy: "open", AllowFrom: []string{"*"}}, guests: &tools.GuestRules{}})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	if err := h.ch.Inject(ctx, messages.Inbound{ChatID: "42", ChatType: messages.ChatDirect, SenderID: "42", Text: "list my jobs"}); err != nil {
		t.Fatal(err)
	}
	h.reply()
	reqs := script.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	for _, want := range []string{"cron is owner-only", `"*" makes nobody the owner`, `add "42" to channels.fake.allowFrom`, "channels.fake.toolsBySender.42.allow"} {
		if !strings.Contains(last.Content, want) {
			t.Errorf("tool result %q lacks %q", last.Content, want)
		}
	}
}
