package actors_test

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// TestSubagentsCommand: /subagents list and log show the conversation's children, /status
// counts them, and /subagents kill stops a running one.
func TestSubagentsCommand(t *testing.T) {
	slow, started, _ := heldTool("slow", "never")
	script := faultScript(map[string]any{"task": "look around", "label": "Scout"}, func(req fakellm.Request) fakellm.Reply {
		if strings.Contains(taskOf(req), "wait") {
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		}
		if lastTool(req) == "weather" {
			return fakellm.Reply{Text: "scouted"}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "weather", map[string]string{})}}
	})
	h := subHarness(t, script, nil, slow)
	h.say("42", "go")
	if got := h.reply(); got.Text != "status: completed" {
		t.Fatalf("answer %q", got.Text)
	}
	h.say("42", "/subagents list")
	if got := h.reply().Text; !strings.Contains(got, "1. Scout — completed") {
		t.Errorf("/subagents list: %q", got)
	}
	h.say("42", "/subagents log Scout")
	if got := h.reply().Text; !strings.Contains(got, "Task: look around") || !strings.Contains(got, "[weather") || !strings.Contains(got, "scouted") {
		t.Errorf("/subagents log: %q", got)
	}
	h.say("42", "/status")
	if got := h.reply().Text; !strings.Contains(got, "Sub-agents: 0 running, 1 spawned") {
		t.Errorf("/status: %q", got)
	}

	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case lastTool(req) == "sessions_spawn":
			return fakellm.Reply{Text: "started"}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("s2", "sessions_spawn", map[string]string{"task": "wait", "label": "Sleeper"})}}
	}
	h.say("42", "start a long one")
	if got := h.reply().Text; got != "started" {
		t.Fatalf("answer %q", got)
	}
	<-started
	h.say("42", "/status")
	if got := h.reply().Text; !strings.Contains(got, "Sub-agents: 1 running, 2 spawned") {
		t.Errorf("/status during a child's run: %q", got)
	}
	h.say("42", "/subagents kill Sleeper")
	if got := h.reply().Text; got != "Stopping 1 sub-agent(s)." {
		t.Errorf("/subagents kill: %q", got)
	}
	waitFor(t, func() bool {
		for _, l := range links(t, h) {
			if l.Label == "Sleeper" {
				return l.Status == messages.SubagentStopped
			}
		}
		return false
	})
}
