package actors_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/reefgw/reef/actors"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// TestSecretsRedactedEverywhere: a secret the user pastes, one the model copies into a tool
// call's arguments and one a tool prints base64-encoded reach neither the tool, the stored
// transcript, a later LLM request nor the reply (#20 findings 3 and 11).
func TestSecretsRedactedEverywhere(t *testing.T) {
	const secret = "sk-canary-secret-4242424242"
	gotArgs := make(chan string, 1)
	echo := &testTool{name: "echo", run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		gotArgs <- string(c.Args)
		return tools.Result{Content: "encoded: " + base64.StdEncoding.EncodeToString([]byte("user:"+secret))}, nil
	}}
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		if len(toolResults(r)) > 0 {
			return fakellm.Reply{Text: "done"}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("e", "echo", map[string]any{"text": "key=" + secret})}}
	}
	store := &inboxStore{}
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{echo},
		wrapStore: func(s persistence.Store) persistence.Store { store.Store = s; return store },
		depsHook:  func(d *actors.Deps) { d.Secrets = []string{secret} }})
	h.say("1", "my key is "+secret+", and its start is "+secret[:14])
	if out := h.reply(); strings.Contains(out.Text, secret) {
		t.Errorf("reply = %q, holds the secret", out.Text)
	}
	if args := <-gotArgs; strings.Contains(args, secret) || !strings.Contains(args, "[redacted]") {
		t.Errorf("the tool got arguments %s, want the secret redacted", args)
	}
	if len(store.inboxCommits()) == 0 {
		t.Error("no message reached the inbox")
	}
	for _, texts := range store.inboxCommits() {
		for _, text := range texts {
			if strings.Contains(text, secret[:12]) {
				t.Errorf("the inbox got %q", text)
			}
		}
	}
	leaks := []string{secret, secret[:12], base64.StdEncoding.EncodeToString([]byte("user:" + secret))[8:30]}
	sawCall := false
	for _, e := range h.transcript("1") {
		b, _ := json.Marshal(e)
		for _, l := range leaks {
			if strings.Contains(string(b), l) {
				t.Errorf("transcript entry %d holds %q: %s", e.Seq, l, b)
			}
		}
		sawCall = sawCall || len(e.ToolCalls) > 0
	}
	if !sawCall {
		t.Error("the transcript holds no tool call")
	}
	for i, r := range script.Requests() {
		b, _ := json.Marshal(r.Messages)
		for _, l := range leaks {
			if strings.Contains(string(b), l) || strings.Contains(string(r.Body), l) {
				t.Errorf("request %d holds %q", i, l)
			}
		}
	}
}
