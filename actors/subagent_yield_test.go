package actors_test

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
)

// TestYieldBesideSpawn: a model that spawns and yields in one step (parallel tool calls, the
// yield listed first) still yields: the yield waits for the spawn beside it, so the parent
// makes no model call until the completion and answers once.
func TestYieldBesideSpawn(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			return fakellm.Reply{Text: "the facts"}
		case len(completions(req)) > 0:
			return fakellm.Reply{Text: "report: the facts"}
		case lastTool(req) != "":
			return fakellm.Reply{Text: "answered before the child finished"}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("y1", subagent.ToolYield, map[string]string{"message": "waiting"}),
			call("s1", subagent.ToolSpawn, map[string]string{"task": "collect the facts", "label": "Worker"}),
		}}
	}
	h := subHarness(t, script, nil)
	for i := range 5 { // the race it guards against is not certain to show in one run
		chat := string(rune('a' + i))
		h.say(chat, "delegate")
		if out := h.reply(); out.Text != "report: the facts" {
			t.Fatalf("chat %s got %q, want the report after the completion", chat, out.Text)
		}
		if r := checkPairs(t, h.transcript(chat))["y1"]; r.IsError || !strings.Contains(r.Content, `"status":"yielded"`) {
			t.Fatalf("chat %s: sessions_yield answered %q, want yielded", chat, r.Content)
		}
	}
}
