package actors_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/plan"
	"github.com/reefgw/reef/tools/sessions"
)

const fence = "```openclaw-process\n"

// eventsUntilRunEnd collects a subscription's events up to the first run.end.
func eventsUntilRunEnd(t *testing.T, sub *events.Subscription) []messages.RunEvent {
	t.Helper()
	var got []messages.RunEvent
	for {
		ev := testutil.Receive(t, sub.Events())
		got = append(got, ev)
		if ev.Kind == messages.RunEnd {
			return got
		}
	}
}

// joinDeltas joins each run of text.delta events into one (how an answer is cut into pieces
// is the stream's business).
func joinDeltas(evs []messages.RunEvent) []messages.RunEvent {
	var out []messages.RunEvent
	for _, ev := range evs {
		if n := len(out); n > 0 && ev.Kind == messages.RunTextDelta && out[n-1].Kind == messages.RunTextDelta {
			out[n-1].Text += ev.Text
			continue
		}
		out = append(out, ev)
	}
	return out
}

// TestRunPublishesItsEventsInOrder: a run with a plan, a refused call, a tool and progress
// blocks publishes its events in order, stamped with its session and run; the user's reply
// has no openclaw-process block, while the transcript keeps the answer as the model wrote it.
func TestRunPublishesItsEventsInOrder(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("sunny"), 0o644); err != nil {
		t.Fatal(err)
	}
	final := "It is sunny.\n\n" + fence + `{"type":"step","id":"b","title":"Write","status":"done"}` + "\n```\n" +
		fence + `{"type":"final","summary":"weather told"}` + "\n```\n"
	script := fakellm.NewScript(
		fakellm.Reply{Text: fence + `{"type":"start","goal":"weather"}` + "\n```\nLooking it up.",
			ToolCalls: []messages.ToolCall{call("p1", "update_plan", map[string]any{"steps": []map[string]any{
				{"id": "a", "title": "Read", "status": "running"}, {"id": "b", "title": "Write", "status": "pending"}}})},
			Usage: messages.Usage{InputTokens: 10, OutputTokens: 5}},
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("n1", "nope", map[string]any{}), call("r1", "read", map[string]any{"path": "notes.txt"})}},
		fakellm.Reply{Text: final, Usage: messages.Usage{InputTokens: 20, OutputTokens: 7}},
	)
	bus := events.NewBus()
	sub := bus.Subscribe("", 100)
	h := newHarness(t, harnessOpts{script: script, workspace: ws, extra: []tools.Tool{plan.New()},
		depsHook: func(d *actors.Deps) { d.Events = bus }})
	h.say("1", "weather?")
	if out := h.reply(); out.Text != "It is sunny." {
		t.Errorf("reply = %q, want the answer without its blocks", out.Text)
	}
	got := eventsUntilRunEnd(t, sub)

	ok, failed := true, false
	want := []messages.RunEvent{
		{Kind: messages.RunStart},
		{Kind: messages.RunTextDelta, Text: "Looking it up."}, // streamed, the block held back
		{Kind: messages.RunStart, Goal: "weather"},
		{Kind: messages.RunToolStart, ID: "p1", Name: "update_plan", Summary: "update_plan (2 steps)"},
		{Kind: messages.RunPlanUpdate, Steps: []messages.PlanStep{{ID: "a", Title: "Read", Status: "running"}, {ID: "b", Title: "Write", Status: "pending"}}},
		{Kind: messages.RunToolEnd, ID: "p1", Name: "update_plan", OK: &ok},
		{Kind: messages.RunToolStart, ID: "n1", Name: "nope", Summary: "nope"},
		{Kind: messages.RunToolEnd, ID: "n1", Name: "nope", OK: &failed},
		{Kind: messages.RunToolStart, ID: "r1", Name: "read", Summary: "read notes.txt"},
		{Kind: messages.RunToolEnd, ID: "r1", Name: "read", OK: &ok},
		{Kind: messages.RunTextDelta, Text: "It is sunny.\n\n"},
		{Kind: messages.RunPlanUpdate, Steps: []messages.PlanStep{{ID: "a", Title: "Read", Status: "running"}, {ID: "b", Title: "Write", Status: "done"}}},
		{Kind: messages.RunEnd, Status: "ok", Tokens: 42, Summary: "weather told"},
	}
	var seq uint64
	run := got[0].Run
	for i, ev := range got {
		if ev.Session != h.key("1") || ev.Run == "" || ev.Run != run || ev.Time.IsZero() {
			t.Errorf("event %d (%s): session %q run %q time %v, want %q, the run's id and a time", i, ev.Kind, ev.Session, ev.Run, ev.Time, h.key("1"))
		}
		if ev.Seq <= seq {
			t.Errorf("event %d (%s): seq %d after %d", i, ev.Kind, ev.Seq, seq)
		}
		seq = ev.Seq
		got[i].Session, got[i].Run, got[i].Seq, got[i].Time, got[i].MS = "", "", 0, time.Time{}, 0
	}
	if diff := cmp.Diff(want, joinDeltas(got)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	var last string
	for _, e := range h.transcript("1") {
		if e.Role == messages.RoleAssistant {
			last = e.Content
		}
	}
	if last != final {
		t.Errorf("transcript's answer = %q, want it as the model wrote it", last)
	}
}

// TestMalformedProcessBlockStaysVisible: a block reef cannot read is sent as text.
func TestMalformedProcessBlockStaysVisible(t *testing.T) {
	text := "Done.\n" + fence + `{"type":"step",` + "\n```"
	h := newHarness(t, harnessOpts{script: fakellm.NewScript(fakellm.Reply{Text: text})})
	h.say("1", "go")
	if out := h.reply(); !strings.Contains(out.Text, fence+`{"type":"step",`) {
		t.Errorf("reply = %q, want the malformed block kept", out.Text)
	}
}

// nextOf waits for the subscription's next event of kind.
func nextOf(t *testing.T, sub *events.Subscription, kind messages.RunEventKind) messages.RunEvent {
	t.Helper()
	for {
		if ev := testutil.Receive(t, sub.Events()); ev.Kind == kind {
			return ev
		}
	}
}

// TestSubagentEvents: the parent's run publishes subagent.start when the spawn is accepted;
// the child's completion publishes subagent.end with its status for the parent's session.
func TestSubagentEvents(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			return fakellm.Reply{Text: "Beijing sunny."}
		case len(completions(req)) > 0:
			return fakellm.Reply{Text: "Brief: Beijing sunny."}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y1", subagent.ToolYield, map[string]string{})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", subagent.ToolSpawn, map[string]string{
			"task": "weather in Beijing", "label": "WeatherCollector"})}}
	}
	bus := events.NewBus()
	h := newHarness(t, harnessOpts{script: script, extra: sessions.Tools(), depsHook: func(d *actors.Deps) { d.Events = bus }})
	sub := bus.Subscribe(h.key("42"), 100)
	h.say("42", "weather brief with a sub-agent")
	start := nextOf(t, sub, messages.SubagentStart)
	if start.ID != "s1" || start.Name != "WeatherCollector" || !strings.HasPrefix(start.Child, "agent:main:subagent:") {
		t.Errorf("subagent.start = %+v", start)
	}
	end := nextOf(t, sub, messages.SubagentEnd)
	if end.Child != start.Child || end.Status != messages.SubagentCompleted || end.Name != "WeatherCollector" || end.Session != h.key("42") {
		t.Errorf("subagent.end = %+v, want the child %s completed", end, start.Child)
	}
	if out := h.reply(); out.Text != "Brief: Beijing sunny." {
		t.Errorf("reply = %q", out.Text)
	}
}

// TestApprovalWaitEvent: an exec call that waits for the owner publishes approval.wait with
// the command.
func TestApprovalWaitEvent(t *testing.T) {
	script := fakellm.NewScript()
	bus := events.NewBus()
	sub := bus.Subscribe("", 100)
	clock := testutil.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	h := newHarness(t, harnessOpts{script: script, clock: clock,
		access:    &access.Rules{DMPolicy: "open", AllowFrom: []string{"*", "owner"}, Groups: []string{"ops"}},
		guests:    &tools.GuestRules{Groups: map[string]tools.GroupGrant{"ops": {Grant: tools.Grant{Allow: []string{"exec"}}}}},
		approvals: actors.ApprovalSettings{Mode: access.ApprovalsOwner, Timeout: approvalTimeout},
		depsHook:  func(d *actors.Deps) { d.Events = bus }})
	r := &approvalRig{harness: h, script: script, clock: clock}
	r.ownerSaysHi(t)
	r.guestAsks(t, "x1", "echo ran >> ran.txt")
	ev := nextOf(t, sub, messages.ApprovalWait)
	if ev.ID != "x1" || ev.Summary != "echo ran >> ran.txt" || ev.Run == "" {
		t.Errorf("approval.wait = %+v", ev)
	}
}

// TestStreamedTextIsRedactedAndKeepsBadBlocks: the text published while an answer streams
// has reef's secrets redacted, hides a well-formed progress block and shows a malformed one.
func TestStreamedTextIsRedactedAndKeepsBadBlocks(t *testing.T) {
	const secret = "sk-canary-7f3a9b2c4d5e6f70"
	text := "the key is " + secret + "\n" + fence + `{"type":"step","id":"a","title":"A","status":"done"}` + "\n```\n" +
		fence + "{bad\n```\nend"
	bus := events.NewBus()
	sub := bus.Subscribe("", 100)
	h := newHarness(t, harnessOpts{script: fakellm.NewScript(fakellm.Reply{Text: text}),
		depsHook: func(d *actors.Deps) { d.Events = bus; d.Secrets = []string{secret} }})
	h.say("1", "go")
	h.reply()
	var streamed string
	for _, ev := range eventsUntilRunEnd(t, sub) {
		if ev.Kind == messages.RunTextDelta {
			streamed += ev.Text
		}
	}
	if strings.Contains(streamed, secret) || !strings.Contains(streamed, "the key is ") {
		t.Errorf("streamed text %q: want the key redacted", streamed)
	}
	if strings.Contains(streamed, `"id":"a"`) || !strings.Contains(streamed, fence+"{bad\n```\nend") {
		t.Errorf("streamed text %q: want the good block hidden, the bad one shown", streamed)
	}
}

// TestStoppedRunEnds: a run stopped with the gateway still publishes its run.end, cancelled.
func TestStoppedRunEnds(t *testing.T) {
	slow, started, release := heldTool("slow", "late")
	defer close(release)
	bus := events.NewBus()
	sub := bus.Subscribe("", 100)
	h := newHarness(t, harnessOpts{script: fakellm.NewScript(fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", "slow", map[string]any{})}}),
		extra: []tools.Tool{slow}, depsHook: func(d *actors.Deps) { d.Events = bus }})
	h.say("1", "go")
	testutil.Receive(t, started)
	h.stop()
	if ev := nextOf(t, sub, messages.RunEnd); ev.Status != "cancelled" {
		t.Errorf("run.end = %+v, want cancelled", ev)
	}
}

// TestStoppedRunsToolEndsStopped: a tool running when its run is stopped (/stop, Ctrl-C)
// ends "stopped" in the run events, not as a failed call.
func TestStoppedRunsToolEndsStopped(t *testing.T) {
	g, script := newGate(t)
	started, release := make(chan string, 1), make(chan struct{})
	bus := events.NewBus()
	sub := bus.Subscribe("", 100)
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{blockTool(started, release)},
		depsHook: func(d *actors.Deps) { d.Events = bus }})
	h.say("1", "count the files")
	g.next()
	g.answer(fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", "slow", map[string]any{})}})
	testutil.Receive(t, started)
	h.say("1", "/stop")
	var end *messages.RunEvent
	for _, ev := range eventsUntilRunEnd(t, sub) {
		if ev.Kind == messages.RunToolEnd && ev.Name == "slow" {
			end = &ev
		}
	}
	if end == nil || end.Status != messages.ToolEndStopped || end.OK == nil || *end.OK {
		t.Errorf("the stopped call's tool.end = %+v, want not ok and status %q", end, messages.ToolEndStopped)
	}
}
