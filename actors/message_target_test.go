package actors_test

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/message"
	"github.com/reefgw/reef/tools/sessions"
)

// TestMessageToolOpenClawShape: {action, message, replyTo, target} — a reply quotes the
// message answered, replyTo another message of the chat; a target chat or session key of the
// same channel gets the message when the owner asks, and a guest's attempt is refused with no
// message sent; react, edit and delete say they are not supported.
func TestMessageToolOpenClawShape(t *testing.T) {
	msg := func(id string, args map[string]any) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call(id, "message", args)}}
	}
	script := fakellm.NewScript(
		msg("a", map[string]any{"action": "reply", "message": "Quoting you."}), fakellm.Reply{Text: "one"},
		msg("b", map[string]any{"action": "send", "message": "About that.", "replyTo": "om-1"}), fakellm.Reply{Text: "two"},
		msg("c", map[string]any{"action": "send", "target": "team", "message": "Heads up."}), fakellm.Reply{Text: "three"},
		msg("d", map[string]any{"action": "send", "target": "agent:main:fake:group:ops", "message": "To ops."}), fakellm.Reply{Text: "four"},
		msg("e", map[string]any{"action": "react", "emoji": "👍"}), fakellm.Reply{Text: "five"},
		msg("f", map[string]any{"action": "send", "target": "team", "message": "From a guest."}), fakellm.Reply{Text: "six"},
	)
	h := newHarness(t, harnessOpts{script: script, extra: append(sessions.Tools(), message.New()),
		access: &access.Rules{DMPolicy: "pairing", AllowFrom: []string{"owner"}},
		guests: &tools.GuestRules{Channel: tools.Grant{Allow: []string{"message"}}}})
	ask := func(sender, id string) {
		t.Helper()
		h.inject(messages.Inbound{ChatID: sender, SenderID: sender, MessageID: id, Text: "go"})
	}
	expect := func(chat, text, replyTo string) {
		t.Helper()
		out := h.reply()
		if out.ChatID != chat || out.Text != text || out.ReplyToID != replyTo {
			t.Errorf("sent %q to %q replying to %q, want %q to %q replying to %q", out.Text, out.ChatID, out.ReplyToID, text, chat, replyTo)
		}
	}
	ask("owner", "om-1")
	expect("owner", "Quoting you.", "om-1")
	expect("owner", "one", "om-1")
	ask("owner", "om-2")
	expect("owner", "About that.", "om-1")
	expect("owner", "two", "om-2")
	ask("owner", "om-3")
	expect("team", "Heads up.", "")
	expect("owner", "three", "om-3")
	ask("owner", "om-4")
	expect("ops", "To ops.", "")
	expect("owner", "four", "om-4")
	ask("owner", "om-5")
	expect("owner", "five", "om-5")
	if res := results(script.Requests()[9])["e"]; !res.IsError || !strings.Contains(res.Content, "not supported") {
		t.Errorf("react: result %+v, want a not-supported error", res)
	}
	h.pair(t, "guest")
	before := len(script.Requests())
	ask("guest", "gm-1")
	expect("guest", "six", "gm-1") // nothing reached "team" before the reply
	if res := results(script.Requests()[before+1])["f"]; !res.IsError || !strings.Contains(res.Content, "not allowed") {
		t.Errorf("guest's cross-chat send: result %+v, want refused", res)
	}
}

// TestMessageToolCurrentAndUndeliverableTargets: on the Telegram wire fake, target "current"
// sends to this conversation (it is OpenClaw's word for it), and a target the platform cannot
// deliver to is an error result for the model, never "sent" (#33 point 13).
func TestMessageToolCurrentAndUndeliverableTargets(t *testing.T) {
	tg := telegramtest.New(t)
	bot := telegramBot(t, tg)
	msg := func(id string, args map[string]any) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call(id, "message", args)}}
	}
	script := fakellm.NewScript(
		msg("a", map[string]any{"action": "send", "target": "current", "message": "Here now."}), fakellm.Reply{Text: "Sent."},
		msg("b", map[string]any{"action": "send", "target": "general", "message": "Lost?"}), fakellm.Reply{Text: "Tried."},
	)
	reg, err := tools.NewRegistry(append(sessions.Tools(), message.New())...)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := tools.NewPolicy(nil, nil, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	startAgent(t, &actors.Agent{ID: "main", Workspace: t.TempDir(), Model: "fake/m", Provider: fakellm.New(script), Tools: reg, Policy: policy,
		ContextWindow: 128000}, "telegram", bot, func(d *actors.Deps) {
		d.Access = map[string]*access.Rules{"telegram": {DMPolicy: "open", AllowFrom: []string{"6"}}}
	})
	shows := func(text string) func() bool {
		return func() bool {
			for _, m := range tg.Messages(6) {
				if m.Text == text {
					return true
				}
			}
			return false
		}
	}
	tg.UserSays(6, 6, "tell me here")
	until(t, "the run's answer", shows("Sent."))
	if !shows("Here now.")() {
		t.Errorf("chat 6 shows %+v, want the message sent to the current conversation", tg.Messages(6))
	}
	if res := results(script.Requests()[1])["a"]; res.IsError {
		t.Errorf("target current: result %+v, want sent", res)
	}
	tg.UserSays(6, 6, "tell the general channel")
	until(t, "the second answer", shows("Tried."))
	if res := results(script.Requests()[3])["b"]; !res.IsError || !strings.Contains(res.Content, "not delivered") {
		t.Errorf("undeliverable target: result %+v, want an error saying it was not delivered", res)
	}
}
