package actors_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
)

// waiting reports whether the current run of a parent was told that sub-agents still run: an
// "active sub-agents" block after its last assistant message.
func waiting(req fakellm.Request) bool {
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != messages.RoleAssistant; i-- {
		if strings.HasPrefix(req.Messages[i].Content, "[Active sub-agents]") {
			return true
		}
	}
	return false
}

// TestSubagentFanOut: three children, one yield; the parent is woken per completion, told how
// many still run, and answers once after the third.
func TestSubagentFanOut(t *testing.T) {
	var woken, silent atomic.Int32
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			return fakellm.Reply{Text: "result of " + taskOf(req), Usage: messages.Usage{InputTokens: 10, OutputTokens: 1}}
		case len(completions(req)) > 0:
			woken.Add(1)
			if waiting(req) {
				silent.Add(1)
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: "all three are in"}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		}
		var calls []messages.ToolCall
		for _, city := range []string{"Beijing", "Shanghai", "Guangdong"} {
			calls = append(calls, call("s-"+city, subagent.ToolSpawn, map[string]string{"task": "weather in " + city, "label": city}))
		}
		return fakellm.Reply{ToolCalls: calls}
	}
	h := subHarness(t, script, nil)
	h.say("42", "three cities")
	if got := h.reply(); got.Text != "all three are in" {
		t.Fatalf("the user got %q, want the one final answer", got.Text)
	}
	var final fakellm.Request
	for _, req := range script.Requests() {
		if !isChild(req) {
			final = req
		}
	}
	if n := len(completions(final)); n != 3 {
		t.Errorf("the final request holds %d completion events, want 3", n)
	}
	if w, s := woken.Load(), silent.Load(); w < 1 || s != w-1 {
		t.Errorf("the parent was woken %d times and stayed silent %d times, want silent every time but the last", w, s)
	}
	var info persistence.SessionInfo
	h.store.View(func(r persistence.Reader) error { info, _, _ = r.Session(h.key("42")); return nil })
	if info.BudgetTokens != 33 {
		t.Errorf("the parent's budget counts %d tokens, want 33 (its children's)", info.BudgetTokens)
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("another message reached the user: %q", out.Text)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestSubagentLateCompletion: the parent answered without waiting; the completion that comes
// after its answer gets NO_REPLY, and nothing more is delivered.
func TestSubagentLateCompletion(t *testing.T) {
	release, lateSeen := make(chan struct{}), make(chan struct{})
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			<-release
			return fakellm.Reply{Text: "late result"}
		case len(completions(req)) > 0:
			close(lateSeen)
			return fakellm.Reply{Text: "NO_REPLY"}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{Text: "started a helper"}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("s", subagent.ToolSpawn, map[string]string{"task": "slow"})}}
	}
	h := subHarness(t, script, nil)
	h.say("42", "go")
	if got := h.reply(); got.Text != "started a helper" {
		t.Fatalf("first answer %q", got.Text)
	}
	close(release)
	<-lateSeen
	select {
	case out := <-h.ch.Sent:
		t.Errorf("a NO_REPLY completion reached the user: %q", out.Text)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestSubagentConcurrencyGate: with maxConcurrent 1, the second child waits for the first.
func TestSubagentConcurrencyGate(t *testing.T) {
	var inFlight, most atomic.Int32
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(50 * time.Millisecond) // widens the window in which a second child would overlap
			inFlight.Add(-1)
			return fakellm.Reply{Text: "done " + taskOf(req)}
		case len(completions(req)) > 0:
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: "both done"}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("a", subagent.ToolSpawn, map[string]string{"task": "a"}),
			call("b", subagent.ToolSpawn, map[string]string{"task": "b"})}}
	}
	h := subHarness(t, script, func(a *actors.Agent) { a.Subagents.MaxConcurrent = 1 })
	h.say("42", "two")
	if got := h.reply(); got.Text != "both done" {
		t.Fatalf("answer %q", got.Text)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d children ran at once, want 1 (maxConcurrent)", m)
	}
}
