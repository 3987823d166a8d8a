package actors_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
)

// ownerOnly are the tools of the harness a guest must never get without a grant.
var ownerOnly = []string{"exec", "write", "edit", "cron"}

// policyHarness is a gateway whose fake channel has an owner ("owner", in direct messages),
// pairing for everyone else, two listed groups, and exec granted to sender 42 in group "ops"
// only. The model is the OpenAI wire fake, so what it records is the real request body.
func policyHarness(t *testing.T, script *fakellm.Script) (*harness, string) {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{provider: wireFakes["openai"](t, script), workspace: ws, extra: []tools.Tool{cron.New()},
		access: &access.Rules{DMPolicy: "pairing", AllowFrom: []string{"owner"}, Groups: []string{"ops", "dev"}, RequireMention: true},
		guests: &tools.GuestRules{Groups: map[string]tools.GroupGrant{
			"ops": {BySender: map[string]tools.Grant{"42": {Allow: []string{"exec"}}}}}}})
	return h, ws
}

// pair lets sender in through the pairing flow, as `reef pairing approve` would.
func (h *harness) pair(t *testing.T, sender string) {
	t.Helper()
	h.inject(messages.Inbound{ChatID: sender, SenderID: sender, Text: "hi"})
	code := codeIn(t, h.reply().Text)
	if err := h.rt.Write(context.Background(), func(tx persistence.Tx) error {
		_, err := access.ApprovePairing(tx, "fake", code, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// forceOwnerTools scripts one run in which the model calls exec, write, edit and cron
// (tagged with who, so side effects can be told apart), then answers "done".
func forceOwnerTools(script *fakellm.Script, who string) {
	script.Add(fakellm.Reply{ToolCalls: []messages.ToolCall{
		call("x-"+who, "exec", map[string]any{"command": "touch ran-" + who}),
		call("w-"+who, "write", map[string]any{"path": "wrote-" + who, "content": "pwned"}),
		call("e-"+who, "edit", map[string]any{"path": "notes.txt", "oldText": "hello", "newText": "edited by " + who}),
		call("c-"+who, "cron", map[string]any{"action": "add", "job": map[string]any{"name": "j-" + who,
			"schedule": map[string]any{"kind": "every", "everyMs": 3600000},
			"payload":  map[string]any{"kind": "systemEvent", "text": "run rm -rf"}}}),
	}}, fakellm.Reply{Text: "done"})
}

// results returns the tool results the model received in req, by call id.
func results(req fakellm.Request) map[string]messages.ChatMessage {
	out := map[string]messages.ChatMessage{}
	for _, m := range req.Messages {
		if m.Role == messages.RoleTool {
			out[m.ToolCallID] = m
		}
	}
	return out
}

// offered checks which of ownerOnly a request offered, in the tools of its raw body (OpenAI
// wire format), the fake's record of them, and its system prompt's tooling section.
func offered(t *testing.T, req fakellm.Request) []string {
	t.Helper()
	var body struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	var bodyTools []string
	for _, tl := range body.Tools {
		bodyTools = append(bodyTools, tl.Function.Name)
	}
	var got []string
	tooling := req.System[strings.Index(req.System, "## Tooling"):]
	tooling = tooling[:strings.Index(tooling, "## Tool-call style")]
	for _, name := range ownerOnly {
		inList := slices.Contains(req.Tools, name)
		inBody := slices.Contains(bodyTools, name)
		inPrompt := strings.Contains(tooling, "- "+name+" ")
		if inList != inBody || inList != inPrompt {
			t.Errorf("%s: in the tool list %v, in the body %v, in the prompt's tooling %v: they must agree", name, inList, inBody, inPrompt)
		}
		if inList {
			got = append(got, name)
		}
	}
	return got
}

// TestGuestsGetNoOwnerTools: a member of a listed group and a paired sender are not offered
// exec, write, edit or cron, and a call to each anyway is refused with no side effect; the
// owner in a direct message gets them all.
func TestGuestsGetNoOwnerTools(t *testing.T) {
	script := fakellm.NewScript()
	h, ws := policyHarness(t, script)
	h.pair(t, "p1")
	guests := []struct {
		who string
		in  messages.Inbound
	}{
		{"member", messages.Inbound{ChatID: "ops", ChatType: messages.ChatGroup, SenderID: "7", Mentioned: true, Text: "run touch, please"}},
		{"paired", messages.Inbound{ChatID: "p1", SenderID: "p1", Text: "run touch, please"}},
	}
	for _, g := range guests {
		before := len(script.Requests())
		forceOwnerTools(script, g.who)
		h.inject(g.in)
		if got := h.reply(); got.Text != "done" {
			t.Fatalf("%s: reply %+v", g.who, got)
		}
		reqs := script.Requests()[before:]
		if len(reqs) != 2 {
			t.Fatalf("%s: %d model requests, want 2", g.who, len(reqs))
		}
		if got := offered(t, reqs[0]); len(got) != 0 {
			t.Errorf("%s was offered %v", g.who, got)
		}
		if !slices.Contains(reqs[0].Tools, "read") {
			t.Errorf("%s was not offered read (the safe set): %v", g.who, reqs[0].Tools)
		}
		res := results(reqs[1])
		for _, id := range []string{"x-", "w-", "e-", "c-"} {
			r, ok := res[id+g.who]
			if !ok || !strings.Contains(r.Content, "owner-only") || !strings.Contains(r.Content, "it was not run") {
				t.Errorf("%s: result of the forced call %s = %+v, want an owner-only refusal", g.who, id+g.who, r)
			}
		}
		for _, f := range []string{"ran-" + g.who, "wrote-" + g.who} {
			if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
				t.Errorf("%s: %s exists: a refused tool ran", g.who, f)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "hello" {
			t.Errorf("%s: notes.txt = %q: a refused edit ran", g.who, b)
		}
	}

	for id, r := range checkPairs(t, h.transcript("p1")) {
		if strings.HasSuffix(id, "-paired") && !r.IsError {
			t.Errorf("paired: stored result of %s is not an error: %+v", id, r)
		}
	}

	before := len(script.Requests())
	forceOwnerTools(script, "owner")
	h.inject(messages.Inbound{ChatID: "owner", SenderID: "owner", Text: "run touch, please"})
	h.reply()
	reqs := script.Requests()[before:]
	if got := offered(t, reqs[0]); !slices.Equal(got, ownerOnly) {
		t.Errorf("the owner was offered %v of %v", got, ownerOnly)
	}
	res := results(reqs[1])
	for _, id := range []string{"x-owner", "w-owner", "e-owner", "c-owner"} {
		if r := res[id]; r.IsError {
			t.Errorf("owner: %s failed: %s", id, r.Content)
		}
	}
	for _, f := range []string{"ran-owner", "wrote-owner"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("owner: %v", err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "edited by owner" {
		t.Errorf("owner's edit: notes.txt = %q", b)
	}
}

// TestExecGrantedToOneSenderInOneGroup: the configuration opens exec to sender 42 in group
// "ops", and only there: not to 42 in another group or in a direct message, not to another
// member of "ops"; and 42 gets nothing else of the owner's.
func TestExecGrantedToOneSenderInOneGroup(t *testing.T) {
	script := fakellm.NewScript()
	h, ws := policyHarness(t, script)
	h.pair(t, "42")
	cases := []struct {
		name string
		in   messages.Inbound
		want []string // of ownerOnly
	}{
		{"42 in ops", messages.Inbound{ChatID: "ops", ChatType: messages.ChatGroup, SenderID: "42", Mentioned: true}, []string{"exec"}},
		{"42 in dev", messages.Inbound{ChatID: "dev", ChatType: messages.ChatGroup, SenderID: "42", Mentioned: true}, nil},
		{"42 in a DM", messages.Inbound{ChatID: "42", SenderID: "42"}, nil},
		{"7 in ops", messages.Inbound{ChatID: "ops", ChatType: messages.ChatGroup, SenderID: "7", Mentioned: true}, nil},
	}
	for i, c := range cases {
		who := string(rune('a' + i))
		before := len(script.Requests())
		script.Add(fakellm.Reply{ToolCalls: []messages.ToolCall{call("x-"+who, "exec", map[string]any{"command": "touch ran-" + who})}},
			fakellm.Reply{Text: "done"})
		c.in.Text = "run it"
		h.inject(c.in)
		h.reply()
		reqs := script.Requests()[before:]
		if got := offered(t, reqs[0]); !slices.Equal(got, c.want) {
			t.Errorf("%s: offered %v, want %v", c.name, got, c.want)
		}
		_, err := os.Stat(filepath.Join(ws, "ran-"+who))
		if ran := err == nil; ran != (c.want != nil) {
			t.Errorf("%s: exec ran = %v, want %v (result %+v)", c.name, ran, c.want != nil, results(reqs[1])["x-"+who])
		}
	}
}

// TestGuestMessageDoesNotJoinAGrantedRun: in a group where sender 42 may use exec, another
// member's message sent during 42's run is not steered into it (it would borrow 42's tools):
// it is told it waits, and gets a run of its own without exec.
func TestGuestMessageDoesNotJoinAGrantedRun(t *testing.T) {
	g, script := newGate(t)
	started, release := make(chan string, 1), make(chan struct{})
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{blockTool(started, release)},
		access: &access.Rules{DMPolicy: "pairing", Groups: []string{"ops"}},
		guests: &tools.GuestRules{Groups: map[string]tools.GroupGrant{
			"ops": {BySender: map[string]tools.Grant{"42": {Allow: []string{"exec", "slow"}}}}}}})
	h.inject(messages.Inbound{ChatID: "ops", ChatType: messages.ChatGroup, SenderID: "42", Text: "build it"})
	if r := g.next(); !slices.Contains(r.Tools, "exec") {
		t.Fatalf("42 was not offered exec: %v", r.Tools)
	}
	g.answer(fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", "slow", map[string]any{})}})
	testutil.Receive(t, started)
	h.inject(messages.Inbound{ChatID: "ops", ChatType: messages.ChatGroup, SenderID: "7", Text: "also run rm -rf ~"})
	if ev := nextEvent(t, h, messages.MessageQueued); strings.Contains(ev.Label, "next step") {
		t.Errorf("member 7's message was steered into 42's run: %q", ev.Label)
	}
	close(release)
	r := g.next()
	for _, m := range r.Messages {
		if strings.Contains(m.Content, "rm -rf") {
			t.Errorf("42's run read member 7's message: %q", m.Content)
		}
	}
	g.answer(fakellm.Reply{Text: "built"})
	if got := h.reply(); got.Text != "built" {
		t.Fatalf("42's reply: %+v", got)
	}
	r = g.next()
	if slices.Contains(r.Tools, "exec") || slices.Contains(r.Tools, "slow") {
		t.Errorf("member 7's run was offered %v", r.Tools)
	}
	if last := r.Messages[len(r.Messages)-1]; !strings.Contains(last.Content, "rm -rf") {
		t.Errorf("member 7's run does not answer their message: %q", last.Content)
	}
	g.answer(fakellm.Reply{Text: "no"})
	h.reply()
}
