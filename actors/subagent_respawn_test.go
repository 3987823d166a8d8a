package actors_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
)

// respawnScript: the parent spawns one child, calls slow and yields, all in one step; a
// spawn answered "interrupted" is made again, as a model would; once no child is still
// running the parent answers with the count of completions. The child calls wait, then
// answers.
func respawnScript() *fakellm.Script {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req) && lastTool(req) == "wait":
			return fakellm.Reply{Text: "done " + taskOf(req)}
		case isChild(req):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "wait", map[string]string{})}}
		case len(completions(req)) > 0:
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: fmt.Sprintf("final report from %d completions", len(completions(req)))}
		}
		for _, m := range req.Messages {
			if m.Role == messages.RoleTool && m.ToolName == subagent.ToolSpawn && strings.Contains(m.Content, "interrupted") {
				return fakellm.Reply{ToolCalls: []messages.ToolCall{
					call("s2", subagent.ToolSpawn, map[string]string{"task": "part A again", "label": "A2"}),
					call("y2", subagent.ToolYield, map[string]string{}),
				}}
			}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("s1", subagent.ToolSpawn, map[string]string{"task": "part A", "label": "A"}),
			call("h1", "slow", map[string]string{}),
			call("y1", subagent.ToolYield, map[string]string{}),
		}}
	}
	return script
}

// TestSpawnNotRepeatedAfterRestart: the gateway stops after the parent's sessions_spawn
// recorded its child but before the run that made the call was recorded (another call of
// the same step still runs, and the child waits for its tool). The run resumed after the start runs the spawn call again and
// is given the same child (no second one), yields again, and the user gets one answer, after
// the child's one completion. Before, the call was answered "interrupted": the model spawned
// again, and a second child's completion made the parent answer twice.
func TestSpawnNotRepeatedAfterRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "reef.db")
	slow, started, _ := heldTool("slow", "never") // holds the step until the gateway stops
	wait, waiting, _ := heldTool("wait", "never") // holds the child's run
	h := newHarness(t, harnessOpts{dbPath: db, script: respawnScript(), extra: append(sessionsAndWeather(), slow, wait)})
	h.say("9", "one part, one report")
	<-started
	<-waiting
	waitFor(t, func() bool { return len(links(t, h)) == 1 })
	h.stop()

	fast := func(name string) tools.Tool {
		return &testTool{name: name, run: func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{Content: "fast now"}, nil }}
	}
	script := respawnScript()
	h2 := newHarness(t, harnessOpts{dbPath: db, script: script, extra: append(sessionsAndWeather(), fast("slow"), fast("wait"))})
	if got := h2.reply().Text; got != "final report from 1 completions" {
		t.Errorf("after the start the user got %q, want the final report of one completion", got)
	}
	noMoreReplies(t, h2)
	all := links(t, h2)
	if len(all) != 1 {
		var labels []string
		for _, l := range all {
			labels = append(labels, l.Label)
		}
		t.Fatalf("%d children (%v), want 1: the spawn call ran twice", len(all), labels)
	}
	for _, l := range all {
		if l.Status != messages.SubagentCompleted || l.Runs != 1 {
			t.Errorf("child %s: status %s, %d runs; want completed, 1", l.Label, l.Status, l.Runs)
		}
	}
	for _, req := range script.Requests() {
		for _, m := range req.Messages {
			if m.Role == messages.RoleTool && m.ToolName == subagent.ToolSpawn && !strings.Contains(m.Content, `"accepted"`) {
				t.Errorf("the model was told of the spawn: %q, want accepted", m.Content)
			}
		}
	}
}
