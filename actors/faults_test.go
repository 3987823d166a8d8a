package actors_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// lastUser returns the text of the newest user message of a request.
func lastUser(r fakellm.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == messages.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

func toolResults(r fakellm.Request) []messages.ChatMessage {
	var out []messages.ChatMessage
	for _, m := range r.Messages {
		if m.Role == messages.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

// TestToolFaultsAreContained: a tool that panics in the ToolRun's Receive, one that panics in
// the goroutine running it, and one that hangs past its timeout each give an error result;
// the run still reaches its answer, and another conversation is answered meanwhile.
func TestToolFaultsAreContained(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	extra := []tools.Tool{
		&syncTool{testTool{name: "panic_inline", run: func(context.Context, tools.Call) (tools.Result, error) {
			panic("boom in Receive")
		}}},
		&testTool{name: "panic_go", run: func(context.Context, tools.Call) (tools.Result, error) {
			panic("boom in goroutine")
		}},
		&testTool{name: "hang", run: func(context.Context, tools.Call) (tools.Result, error) {
			<-release // ignores cancellation on purpose
			return tools.Result{Content: "late"}, nil
		}},
	}
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(lastUser(r), "other") {
			return fakellm.Reply{Text: "other conversation answered"}
		}
		if results := toolResults(r); len(results) > 0 {
			var b strings.Builder
			for _, m := range results {
				b.WriteString(m.ToolName + "=" + m.Content + "; ")
			}
			return fakellm.Reply{Text: "done: " + b.String()}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("a", "panic_inline", map[string]any{}),
			call("b", "panic_go", map[string]any{}),
			call("c", "hang", map[string]any{}),
		}}
	}
	h := newHarness(t, harnessOpts{script: script, extra: extra, limits: actors.Limits{ToolTimeout: 2 * time.Second}})

	h.say("faulty", "run the broken tools")
	// wait until the hang has started, then talk in another conversation
	for ev := range h.ch.Events {
		if ev.Kind == messages.ToolStarted && strings.HasPrefix(ev.Label, "hang") {
			break
		}
	}
	h.say("other", "hello from the other conversation")
	first := h.reply()
	if first.ChatID != "other" {
		t.Fatalf("first reply went to %s (%q); the other conversation should not wait for the hung tool", first.ChatID, first.Text)
	}
	second := h.reply()
	if second.ChatID != "faulty" || !strings.HasPrefix(second.Text, "done:") {
		t.Fatalf("second reply = %+v, want the faulty run's answer", second)
	}
	results := checkPairs(t, h.transcript("faulty"))
	for id, want := range map[string]string{"a": "crashed", "b": "crashed", "c": "2s"} {
		r := results[id]
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("result %s = %+v, want an error mentioning %q", id, r, want)
		}
	}
}

// TestBadToolCalls: malformed JSON, an unknown tool and a denied tool each get an error result
// and have no side effect; the model sees the errors and answers.
func TestBadToolCalls(t *testing.T) {
	ws := t.TempDir()
	script := fakellm.NewScript(
		fakellm.Reply{ToolCalls: []messages.ToolCall{
			{ID: "m", Name: "write", Arguments: `{"path": "malformed.txt", "content": "x"`},
			call("u", "teleport", map[string]any{"to": "mars"}),
			call("d", "exec", map[string]any{"command": "touch denied.txt"}),
			call("x", "write", map[string]any{"path": "extra.txt", "content": "x", "mode": "0777"}),
		}},
		fakellm.Reply{Text: "sorry, those failed"},
	)
	h := newHarness(t, harnessOpts{script: script, workspace: ws, deny: []string{"exec"}})
	h.say("1", "do things")
	if got := h.reply().Text; got != "sorry, those failed" {
		t.Fatalf("reply = %q", got)
	}
	results := checkPairs(t, h.transcript("1"))
	for id, want := range map[string]string{"m": "not valid JSON", "u": "unknown tool", "d": "\"exec\" is not allowed for this agent", "x": "mode"} {
		if r := results[id]; !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("result %s = %+v, want an error mentioning %q", id, r, want)
		}
	}
	for _, f := range []string{"malformed.txt", "denied.txt", "extra.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s exists: a refused call had a side effect", f)
		}
	}
	if got := len(toolResults(script.Requests()[1])); got != 4 {
		t.Errorf("the model saw %d tool results, want 4", got)
	}
}

// TestRunLimits: a model that keeps calling tools is stopped by the loop and count limits,
// and the user is told why.
func TestRunLimits(t *testing.T) {
	t.Run("repeat", func(t *testing.T) {
		script := fakellm.NewScript()
		script.Respond = func(fakellm.Request) fakellm.Reply {
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("", "ls", map[string]any{"path": "."})}}
		}
		h := newHarness(t, harnessOpts{script: script, limits: actors.Limits{LoopStopAt: 3}})
		h.say("1", "loop")
		if got := h.reply().Text; !strings.Contains(got, "same result over and over (3 times)") {
			t.Errorf("reply = %q, want it to say the call kept repeating", got)
		}
		if n := len(script.Requests()); n != 3 {
			t.Errorf("provider called %d times, want 3 (the third identical result stops the run)", n)
		}
		checkPairs(t, h.transcript("1"))
	})
	t.Run("count", func(t *testing.T) {
		script := fakellm.NewScript()
		var n atomic.Int32
		script.Respond = func(fakellm.Request) fakellm.Reply {
			k := int(n.Add(1))
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("", "ls", map[string]any{"path": strings.Repeat("./", k)})}}
		}
		h := newHarness(t, harnessOpts{script: script, limits: actors.Limits{MaxToolCalls: 5}})
		h.say("1", "loop")
		if got := h.reply().Text; !strings.Contains(got, "5 tool calls") {
			t.Errorf("reply = %q, want it to name the limit of 5 tool calls", got)
		}
		checkPairs(t, h.transcript("1"))
	})
}

// TestSecretsRedacted: a tool that prints one of the gateway's secrets (as a command reading
// the gateway's environment could) has it replaced before the transcript, the next LLM
// request and the reply see it.
func TestSecretsRedacted(t *testing.T) {
	const secret = "sk-canary-secret-4242424242"
	leak := &testTool{name: "leak", run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Content: "OPENAI_API_KEY=" + secret}, nil
	}}
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		if res := toolResults(r); len(res) > 0 {
			return fakellm.Reply{Text: "the tool said: " + res[0].Content + " and I guess " + secret}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("l", "leak", map[string]any{})}}
	}
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{leak},
		depsHook: func(d *actors.Deps) { d.Secrets = []string{secret} }})
	h.say("1", "show me the environment")
	out := h.reply()
	if strings.Contains(out.Text, secret) || !strings.Contains(out.Text, "[redacted]") {
		t.Errorf("reply = %q, want the secret redacted", out.Text)
	}
	for _, e := range h.transcript("1") {
		if strings.Contains(e.Content, secret) {
			t.Errorf("transcript entry %d holds the secret", e.Seq)
		}
	}
	for i, r := range script.Requests() {
		if strings.Contains(string(r.Body), secret) || requestHas(r, secret) {
			t.Errorf("request %d holds the secret", i)
		}
	}
}
