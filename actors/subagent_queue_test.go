package actors_test

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
)

// linkByLabel returns the stored link of the child labelled label.
func linkByLabel(t *testing.T, h *harness, label string) subagent.Link {
	t.Helper()
	for _, l := range links(t, h) {
		if l.Label == label {
			return l
		}
	}
	return subagent.Link{}
}

// lastToolResult returns the content of the tool result that ends req.
func lastToolResult(req fakellm.Request) string {
	if n := len(req.Messages); n > 0 {
		return req.Messages[n-1].Content
	}
	return ""
}

// TestSubagentQueuedShown: with maxConcurrent 1, one of two children waits for the other's slot.
// It is marked queued in the store, and the parent shows it queued in /subagents list,
// /status and the subagents tool; it runs once the first ends, and the parent answers once.
func TestSubagentQueuedShown(t *testing.T) {
	slow, started, release := heldTool("slow", "slow done")
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req) && lastTool(req) == "":
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case isChild(req):
			return fakellm.Reply{Text: "done " + taskOf(req)}
		case lastTool(req) == subagent.ToolSubagents:
			return fakellm.Reply{Text: "list: " + lastToolResult(req)}
		case len(completions(req)) > 0:
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: "both done"}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		case strings.Contains(lastToolResult(req), "check"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("l", subagent.ToolSubagents, map[string]string{"action": "list"})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("a", subagent.ToolSpawn, map[string]string{"task": "first", "label": "First"}),
			call("b", subagent.ToolSpawn, map[string]string{"task": "second", "label": "Second"})}}
	}
	h := subHarness(t, script, func(a *actors.Agent) { a.Subagents.MaxConcurrent = 1 }, slow)
	h.say("42", "two")
	<-started // one child holds the only slot (the two spawns run at once: either may)
	var running, queued string
	waitFor(t, func() bool {
		for _, l := range links(t, h) {
			switch l.Status {
			case messages.SubagentQueued:
				queued = l.Label
			case messages.SubagentRunning:
				running = l.Label
			}
		}
		return queued != "" && running != ""
	})
	var list string
	waitFor(t, func() bool { // the parent hears of it once the mark is durable
		h.say("42", "/subagents list")
		list = h.reply().Text
		return strings.Contains(list, ". "+queued+" — queued")
	})
	if !strings.Contains(list, ". "+running+" — running") {
		t.Errorf("/subagents list: %q", list)
	}
	h.say("42", "/status")
	if got := h.reply().Text; !strings.Contains(got, "Sub-agents: 1 running, 1 queued") {
		t.Errorf("/status: %q", got)
	}
	h.say("42", "check")
	got := h.reply().Text
	if !strings.Contains(got, `"status":"queued"`) || !strings.Contains(got, `"status":"running"`) {
		t.Errorf("subagents list (the tool): %q", got)
	}

	close(release)
	if got := h.reply().Text; got != "both done" {
		t.Fatalf("the user got %q, want the one final answer", got)
	}
	for _, label := range []string{"First", "Second"} {
		if st := linkByLabel(t, h, label).Status; st != messages.SubagentCompleted {
			t.Errorf("%s is stored %q, want completed", label, st)
		}
	}
	h.say("42", "/status")
	if got := h.reply().Text; !strings.Contains(got, "Sub-agents: 0 running, 2 spawned") {
		t.Errorf("/status at the end: %q", got)
	}
}
