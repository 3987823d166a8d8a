package actors_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/routing"
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/subagent"
)

// TestSessionsSend: a run in one conversation asks another session and waits for its reply;
// the receiver's model sees an inter-session message (not its user), its user sees nothing,
// and the sender gets the reply. With timeoutSeconds 0 the call returns at once.
func TestSessionsSend(t *testing.T) {
	script := fakellm.NewScript()
	h := subHarness(t, script, nil)
	other := h.key("7")
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == messages.RoleSystem && strings.Contains(last.Content, "[Inter-session message from session "+h.key("42")):
			if strings.Contains(last.Content, "no answer needed") {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: "blue"}
		case lastTool(req) == subagent.ToolSend:
			return fakellm.Reply{Text: "tool said: " + last.Content}
		case strings.Contains(last.Content, "ask seven"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("q", subagent.ToolSend, map[string]any{"sessionKey": other, "message": "favourite colour?"})}}
		case strings.Contains(last.Content, "tell seven"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("q", subagent.ToolSend, map[string]any{"sessionKey": other, "message": "fyi, no answer needed", "timeoutSeconds": 0})}}
		}
		return fakellm.Reply{Text: "hello"}
	}
	h.say("7", "hi")
	if got := h.reply(); got.ChatID != "7" || got.Text != "hello" {
		t.Fatalf("chat 7: %+v", got)
	}
	h.say("42", "ask seven")
	got := h.reply()
	if got.ChatID != "42" || !strings.Contains(got.Text, `"status":"ok"`) || !strings.Contains(got.Text, `"reply":"blue"`) {
		t.Fatalf("the sender's answer: %+v", got)
	}
	h.say("42", "tell seven")
	if got := h.reply(); got.ChatID != "42" || !strings.Contains(got.Text, `"status":"sent"`) {
		t.Fatalf("fire and forget: %+v", got)
	}
	waitFor(t, func() bool { // the receiver answered both, to nobody
		n := 0
		for _, e := range h.transcript("7") {
			if e.Role == messages.RoleSystem && strings.HasPrefix(e.Content, "[Inter-session message") {
				n++
			}
		}
		return n == 2
	})
	select {
	case out := <-h.ch.Sent:
		t.Errorf("a message reached a user: %+v", out)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestEventsOutOfOrder: events reef raises come from several actors (children, the Timer)
// and may reach a live Session out of inbox order; each one is still answered.
func TestEventsOutOfOrder(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.say("5", "hello")
	h.reply() // the session is live and has loaded its inbox
	key := h.key("5")
	var events []messages.Inbound
	for _, text := range []string{"event one", "event two"} {
		in := messages.Inbound{System: true, Source: "test", Text: text, SessionKey: key}
		if err := h.rt.Write(context.Background(), func(tx persistence.Tx) error {
			var err error
			in.InboxSeq, err = tx.AppendInbox(key, in)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		events = append(events, in)
	}
	h.rt.RouteInbound(events[1]) // the later one first
	h.rt.RouteInbound(events[0])
	waitFor(t, func() bool {
		seen := 0
		for _, e := range h.transcript("5") {
			if e.Role == messages.RoleSystem && strings.HasPrefix(e.Content, "event ") {
				seen++
			}
		}
		return seen == 2
	})
}

// TestSessionsSendAcrossAgents: two agents with their own persona; chat 7 is bound to the
// second. A run of the first asks chat 7's session with sessions_send: the second agent
// answers in its own persona, the answer comes back to the sender only, and neither user sees
// the other's conversation.
func TestSessionsSendAcrossAgents(t *testing.T) {
	persona := func(req fakellm.Request) string {
		if m := regexp.MustCompile(`PERSONA=([a-z]+)`).FindStringSubmatch(req.System); m != nil {
			return m[1]
		}
		return "nobody"
	}
	workKey := sessionkey.For("work", "", &messages.Inbound{Channel: "fake", ChatID: "7", SenderID: "7", ChatType: messages.ChatDirect})
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.Contains(last.Content, "[Inter-session message from session "):
			return fakellm.Reply{Text: "answered by " + persona(req)}
		case lastTool(req) == subagent.ToolSend:
			return fakellm.Reply{Text: persona(req) + " got: " + last.Content}
		case strings.Contains(last.Content, "ask work"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("q", subagent.ToolSend, map[string]any{"sessionKey": workKey, "message": "who are you?"})}}
		}
		return fakellm.Reply{Text: "hello from " + persona(req)}
	}
	mainWS, workWS := t.TempDir(), t.TempDir()
	for dir, p := range map[string]string{mainWS: "main", workWS: "work"} {
		if err := os.WriteFile(filepath.Join(dir, "SOUL.md"), []byte("PERSONA="+p+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, harnessOpts{script: script, extra: sessionsAndWeather(), workspace: mainWS, depsHook: func(d *actors.Deps) {
		a := d.Agents[0]
		d.Agents = append(d.Agents, &actors.Agent{ID: "work", Name: "Work", Workspace: workWS, Model: a.Model, Provider: a.Provider,
			Tools: a.Tools, Policy: a.Policy, ContextWindow: a.ContextWindow, Limits: a.Limits})
		d.Routes = routing.New([]routing.Binding{{AgentID: "work", Channel: "fake", PeerKind: "direct", PeerID: "7"}})
	}})
	h.say("7", "hi")
	if got := h.reply(); got.ChatID != "7" || got.Text != "hello from work" {
		t.Fatalf("chat 7 (bound to work): %+v", got)
	}
	h.say("42", "ask work")
	if got := h.reply(); got.ChatID != "42" || !strings.Contains(got.Text, "main got: ") || !strings.Contains(got.Text, `"reply":"answered by work"`) {
		t.Fatalf("the sender's answer: %+v", got)
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("a message reached a user: %+v", out)
	case <-time.After(300 * time.Millisecond):
	}
}
