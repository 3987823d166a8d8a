package actors_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/message"
	"github.com/reefgw/reef/tools/sessions"
)

// TestClusterSessionsSendWaits: a run on node A sends to a session node B runs and waits for
// its reply, which comes back across the nodes.
func TestClusterSessionsSendWaits(t *testing.T) {
	url := pgtest.URL(t)
	seven := chatKey("7")
	o := pgNodeOpts{url: url, workspace: t.TempDir(), extra: sessions.Tools(),
		respond: func(req fakellm.Request) fakellm.Reply {
			last := req.Messages[len(req.Messages)-1]
			switch {
			case last.Role == messages.RoleSystem && strings.Contains(last.Content, "[Inter-session message"):
				return fakellm.Reply{Text: "blue"}
			case last.Role == messages.RoleTool:
				return fakellm.Reply{Text: "tool said: " + last.Content}
			case strings.Contains(last.Content, "ask seven"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("q", "sessions_send",
					map[string]any{"sessionKey": seven, "message": "favourite colour?", "timeoutSeconds": 20})}}
			}
			return fakellm.Reply{Text: "hello"}
		}}
	a, b := startPGNode(t, "a", o), startPGNode(t, "b", o)
	a.owns("42")
	b.owns("7")
	b.inject(t, messages.Inbound{ChatID: "7", SenderID: "7", Text: "hi"})
	b.sentTo(t, "7", "hello")
	a.inject(t, messages.Inbound{ChatID: "42", SenderID: "42", Text: "ask seven"})
	got := a.sentTo(t, "42", "tool said:")
	if !strings.Contains(got.Text, `"status":"ok"`) || !strings.Contains(got.Text, `"reply":"blue"`) {
		t.Errorf("the sender's answer %q; want the receiver's reply", got.Text)
	}
	if n := len(a.script.Requests()); n != 2 {
		t.Errorf("node A's model was asked %d times; want 2: the reply's entry is no message to run", n)
	}
	waitUntil(t, "the reply's inbox entry to be taken", func() bool { return inboxEmpty(t, a.store, chatKey("42")) })
}

// TestClusterMessageEditAfterMove: a run on node A sends a message with the message tool; the
// conversation moves to node B, whose run edits that message and then deletes it. Node B's
// Connector never sent it: it finds it in the store's record of what was sent in the chat.
func TestClusterMessageEditAfterMove(t *testing.T) {
	platform := fake.NewEditable()
	sentID := regexp.MustCompile(`sent \(messageId ([^)]+)\)`)
	o := pgNodeOpts{url: pgtest.URL(t), workspace: t.TempDir(), extra: []tools.Tool{message.New()}, platform: platform,
		respond: func(req fakellm.Request) fakellm.Reply {
			last := req.Messages[len(req.Messages)-1]
			var id string
			for _, m := range req.Messages {
				if g := sentID.FindStringSubmatch(m.Content); m.Role == messages.RoleTool && g != nil {
					id = g[1]
				}
			}
			switch {
			case last.Role == messages.RoleTool:
				return fakellm.Reply{Text: "tool said: " + last.Content}
			case strings.Contains(last.Content, "send a note"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("m1", "message", map[string]any{"action": "send", "message": "Working on it"})}}
			case strings.Contains(last.Content, "edit the note"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("m2", "message", map[string]any{"action": "edit", "messageId": id, "message": "Done now"})}}
			case strings.Contains(last.Content, "delete the note"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("m3", "message", map[string]any{"action": "delete", "messageId": id})}}
			}
			return fakellm.Reply{Text: "hello"}
		}}
	a, b := startPGNode(t, "a", o), startPGNode(t, "b", o)
	a.owns("5")
	say := func(text string) {
		if err := platform.Inject(context.Background(), messages.Inbound{ChatID: "5", SenderID: "5", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	// shown waits until the chat shows a message containing want (sent, or edited into a
	// draft: the Editable publishes only sends) and returns it.
	shown := func(want ...string) string {
		t.Helper()
		var got string
		deadline := time.Now().Add(testutil.Timeout)
		for got == "" {
			for _, text := range platform.Shown("5") {
				if strings.Contains(text, want[0]) && (len(want) == 1 || strings.Contains(text, want[1])) {
					got = text
				}
			}
			if got == "" && time.Now().After(deadline) {
				t.Fatalf("the chat never showed %q: %q", want, platform.Shown("5"))
			}
			time.Sleep(5 * time.Millisecond) // polling the fake platform
		}
		return got
	}
	say("send a note")
	shown("Working on it")
	got := shown("tool said:", "sent (messageId")
	m := sentID.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("the send's result %q names no message", got)
	}

	a.own.set(chatKey("5"), false) // the conversation moves to node B
	a.rt.PartitionsChanged()
	waitUntil(t, "node A to stop the session", func() bool { return len(a.rt.LiveSessionKeys()) == 0 })
	b.owns("5")
	say("edit the note")
	if got := shown("tool said:", "edited (messageId"); !strings.Contains(got, "edited (messageId "+m[1]+")") {
		t.Fatalf("the edit on node B: %q", got)
	}
	if texts, _ := platform.History(m[1]); len(texts) == 0 || texts[len(texts)-1] != "Done now" {
		t.Errorf("the message's texts on the platform: %q; want it edited", texts)
	}
	say("delete the note")
	if got := shown("tool said:", "deleted (messageId"); !strings.Contains(got, "deleted (messageId "+m[1]+")") {
		t.Fatalf("the delete on node B: %q", got)
	}
	if _, deletes := platform.History(m[1]); deletes != 1 {
		t.Errorf("the message was deleted %d times; want once", deletes)
	}
}

// TestClusterCancelOnAnotherNode: Runtime.Cancel (Ctrl-C in reef chat) given on node A stops
// the run of a session node B runs; the session answers its next message.
func TestClusterCancelOnAnotherNode(t *testing.T) {
	o := pgNodeOpts{url: pgtest.URL(t), workspace: t.TempDir(),
		respond: func(req fakellm.Request) fakellm.Reply {
			if strings.Contains(req.Messages[len(req.Messages)-1].Content, "think forever") {
				return fakellm.Reply{Hang: true}
			}
			return fakellm.Reply{Text: "fresh answer"}
		}}
	a, b := startPGNode(t, "a", o), startPGNode(t, "b", o)
	b.owns("5")
	b.inject(t, messages.Inbound{ChatID: "5", SenderID: "5", Text: "think forever"})
	waitUntil(t, "the hanging model call", func() bool { return len(b.script.Requests()) == 1 })
	a.rt.Cancel(chatKey("5"))
	b.sentTo(t, "5", "Stopped.")
	b.inject(t, messages.Inbound{ChatID: "5", SenderID: "5", Text: "hello again"})
	b.sentTo(t, "5", "fresh answer")
	waitUntil(t, "the cancel's inbox entry to be taken", func() bool { return inboxEmpty(t, b.store, chatKey("5")) })
}
