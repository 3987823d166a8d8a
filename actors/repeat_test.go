package actors_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

const loopWarning = "you are repeating yourself"

// TestLoopWarnsThenStops: a model that keeps listing the same folder and keeps getting the
// same listing is warned in the 10th result (it sees the warning in its next request), and
// the run stops at the 20th with one friendly line naming the tool.
func TestLoopWarnsThenStops(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(fakellm.Request) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("", "ls", map[string]any{"path": "."})}}
	}
	h := newHarness(t, harnessOpts{script: script})
	h.say("1", "what is in my workspace?")
	want := "I stopped: I was calling ls with the same arguments and getting the same result over and over (20 times)."
	if got := h.reply().Text; got != want {
		t.Errorf("reply = %q, want %q", got, want)
	}
	reqs := script.Requests()
	if len(reqs) != 20 {
		t.Fatalf("provider called %d times, want 20 (the 20th identical result stops the run)", len(reqs))
	}
	for i, r := range reqs {
		results := toolResults(r)
		if len(results) != i {
			t.Fatalf("request %d carries %d tool results, want %d", i+1, len(results), i)
		}
		for j, res := range results {
			warned := strings.Contains(res.Content, loopWarning)
			if wantWarn := j+1 >= 10; warned != wantWarn {
				t.Errorf("request %d: result %d warned = %v, want %v: %q", i+1, j+1, warned, wantWarn, res.Content)
			}
		}
	}
	if last := toolResults(reqs[10])[9].Content; !strings.Contains(last, "change your approach") || !strings.Contains(last, "ls") {
		t.Errorf("the 10th result does not tell the model to change its approach: %q", last)
	}
	checkPairs(t, h.transcript("1"))
}

// TestLoopChangingResultIsNoLoop: the same call whose result changes each time (polling a
// build) is not a loop: no warning, no stop.
func TestLoopChangingResultIsNoLoop(t *testing.T) {
	var n atomic.Int32
	poll := &testTool{name: "build_status", run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Content: fmt.Sprintf("build running, step %d of 30", n.Add(1))}, nil
	}}
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		if len(toolResults(r)) < 30 {
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("", "build_status", map[string]any{"id": "b1"})}}
		}
		return fakellm.Reply{Text: "The build finished."}
	}
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{poll}})
	h.say("1", "wait for the build")
	if got := h.reply().Text; got != "The build finished." {
		t.Errorf("reply = %q, want the answer after 30 polls", got)
	}
	reqs := script.Requests()
	for _, res := range toolResults(reqs[len(reqs)-1]) {
		if strings.Contains(res.Content, loopWarning) {
			t.Fatalf("a changing result was warned about: %q", res.Content)
		}
	}
}
