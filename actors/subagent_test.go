package actors_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/sessions"
)

// The sub-agent tests script the model by conversation: a child's requests open with its
// task, a parent's hold the user's message; what a request already holds says which step it is.

const taskOpening = "[Sub-agent task]"

// isChild reports whether req is a sub-agent's (it holds a task: the first message, or after
// the parent's messages with context fork).
func isChild(req fakellm.Request) bool {
	for _, m := range req.Messages {
		if strings.HasPrefix(m.Content, taskOpening) {
			return true
		}
	}
	return false
}

// completions returns the completion events a request holds.
func completions(req fakellm.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == messages.RoleSystem && strings.Contains(m.Content, "[Internal event: a sub-agent finished") {
			out = append(out, m.Content)
		}
	}
	return out
}

// lastTool returns the name of the tool whose result ends the request, or "".
func lastTool(req fakellm.Request) string {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == messages.RoleTool {
		return req.Messages[n-1].ToolName
	}
	return ""
}

// taskOf returns the task line of a child's request.
func taskOf(req fakellm.Request) string {
	for _, m := range req.Messages {
		if strings.HasPrefix(m.Content, taskOpening) {
			_, task, _ := strings.Cut(m.Content, "Task:\n")
			return task
		}
	}
	return ""
}

// subHarness is a harness with the session tools and a weather tool.
func subHarness(t *testing.T, script *fakellm.Script, hook func(*actors.Agent), extra ...tools.Tool) *harness {
	weather := &testTool{name: "weather", run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		return tools.Result{Content: "Beijing 21C sunny; Shanghai 18C rain; Guangdong 27C cloudy"}, nil
	}}
	return newHarness(t, harnessOpts{script: script, extra: append(append(sessions.Tools(), weather), extra...), agentHook: hook})
}

// childEntries reads the transcript of every sub-agent session, by key.
func childEntries(t *testing.T, h *harness) map[string][]persistence.Entry {
	t.Helper()
	out := map[string][]persistence.Entry{}
	err := h.store.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, in := range infos {
			if subagent.IsKey(in.Key) {
				if out[in.Key], err = r.Messages(in.Key, 0); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSubagentWalkthrough is the walkthrough: spawn, yield, the child works with its
// own tools, its completion wakes the parent, the parent answers once.
func TestSubagentWalkthrough(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req) && lastTool(req) == "":
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w1", "weather", map[string]string{"city": "all"})},
				Usage: messages.Usage{InputTokens: 100, OutputTokens: 10}}
		case isChild(req):
			return fakellm.Reply{Text: "Summary: Beijing sunny, Shanghai rain, Guangdong cloudy.", Usage: messages.Usage{InputTokens: 200, OutputTokens: 20}}
		case len(completions(req)) > 0:
			return fakellm.Reply{Text: "Today's weather brief: Beijing sunny, Shanghai rain, Guangdong cloudy."}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y1", subagent.ToolYield, map[string]string{"message": "waiting for WeatherCollector"})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", subagent.ToolSpawn, map[string]string{
			"task": "collect today's weather for Beijing, Shanghai and Guangdong and summarise it", "label": "WeatherCollector", "runtime": "subagent"})}}
	}
	h := subHarness(t, script, nil)
	h.say("42", "Draft today's weather brief with a sub-agent")
	got := h.reply()
	if !strings.HasPrefix(got.Text, "Today's weather brief") {
		t.Fatalf("first message the user got: %q, want the final report (no intermediate chatter)", got.Text)
	}

	// The parent's transcript: spawn accepted at once, yield, then the completion and the report.
	results := checkPairs(t, h.transcript("42"))
	if r := results["s1"]; r.IsError || !strings.Contains(r.Content, `"status":"accepted"`) || !strings.Contains(r.Content, `"childSessionKey":"agent:main:subagent:`) {
		t.Errorf("sessions_spawn result: %q", r.Content)
	}
	if r := results["y1"]; r.IsError || !strings.Contains(r.Content, `"status":"yielded"`) {
		t.Errorf("sessions_yield result: %q", r.Content)
	}
	// The child: its own session with its own tool call, linked to the parent.
	children := childEntries(t, h)
	if len(children) != 1 {
		t.Fatalf("%d sub-agent sessions, want 1", len(children))
	}
	for key, entries := range children {
		if r := checkPairs(t, entries)["w1"]; !strings.Contains(r.Content, "Beijing 21C") {
			t.Errorf("child %s: weather result %q", key, r.Content)
		}
		var link subagent.Link
		h.store.View(func(r persistence.Reader) error { link, _, _ = subagent.Get(r, key); return nil })
		if link.Parent != h.key("42") || link.Status != messages.SubagentCompleted || link.Label != "WeatherCollector" {
			t.Errorf("link %+v", link)
		}
		if link.Usage.InputTokens != 300 || link.Usage.OutputTokens != 30 {
			t.Errorf("child usage %+v, want 300 in / 30 out", link.Usage)
		}
	}
	// The parent's request after the yield holds exactly one completion, with the answer inside the markers.
	var last fakellm.Request
	n := 0
	for _, req := range script.Requests() {
		if !isChild(req) {
			last = req
			n++
		}
	}
	if n != 3 {
		t.Errorf("the parent made %d model calls, want 3 (spawn, yield, report)", n)
	}
	cs := completions(last)
	if len(cs) != 1 {
		t.Fatalf("the parent's last request holds %d completion events, want 1", len(cs))
	}
	c := cs[0]
	for _, want := range []string{"source: subagent", "label: WeatherCollector", "status: completed", "tokens in 300, out 30",
		"<<<UNTRUSTED id=", "source=subagent>>>\nSummary: Beijing sunny", "<<<END_UNTRUSTED id=", "normal reply for the user"} {
		if !strings.Contains(c, want) {
			t.Errorf("completion lacks %q:\n%s", want, c)
		}
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("a second message reached the user: %q", out.Text)
	case <-time.After(300 * time.Millisecond): // nothing else is coming: the runs are all recorded
	}
	_ = testutil.Timeout
}

// sessionsAndWeather are the session tools and a weather tool.
func sessionsAndWeather() []tools.Tool {
	weather := &testTool{name: "weather", run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		return tools.Result{Content: "Beijing 21C sunny; Shanghai 18C rain; Guangdong 27C cloudy"}, nil
	}}
	return append(sessions.Tools(), weather)
}
