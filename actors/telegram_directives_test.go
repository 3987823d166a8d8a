package actors_test

import (
	"strconv"
	"testing"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// TestTelegramReplyDirectivesAndReact: on the Telegram wire fake, the message tool's react
// sets the bot's reaction on the user's message (setMessageReaction), and a reply with
// [[reply_to:<id>]] and a <final> block arrives as a native reply to that message, showing
// only the final block.
func TestTelegramReplyDirectivesAndReact(t *testing.T) {
	srv := telegramtest.New(t)
	sent := sentTo(srv, 10)
	bot := telegramBot(t, srv)
	first := srv.Message(5, telego.ChatTypePrivate, 5, "hello")
	second := srv.Message(5, telego.ChatTypePrivate, 5, "and more")
	quoted := "5:" + itoa(first.MessageID)
	script := fakellm.NewScript(
		fakellm.Reply{Text: "ok"},
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("r1", "message", map[string]any{"action": "react", "emoji": "👍", "messageId": quoted})}},
		fakellm.Reply{Text: "Thinking it over. <final>[[reply_to:" + quoted + "]] **Done.**</final>"},
	)
	startWith(t, "telegram", bot, script)
	answer := func() telegramtest.SentMessage { return nextAnswer(t, sent) }
	srv.Queue(telego.Update{Message: first})
	if m := answer(); m.Text != "ok" {
		t.Fatalf("first reply %+v", m)
	}
	srv.Queue(telego.Update{Message: second})
	m := answer()
	if m.Text != "Done." || m.ReplyTo != first.MessageID || m.Edits != 0 {
		t.Errorf("reply %q quoting %d (%d edits), want %q sent anew quoting the first message (%d)", m.Text, m.ReplyTo, m.Edits, "Done.", first.MessageID)
	}
	for _, d := range srv.Messages(5) {
		if d.Text == "…" && !d.Deleted {
			t.Errorf("the draft %d was left in the chat", d.MessageID)
		}
	}
	if got := srv.Reactions(5); len(got) != 1 || got[0] != (telegramtest.Reaction{MessageID: first.MessageID, Emoji: "👍"}) {
		t.Errorf("reactions %+v, want 👍 on message %d", got, first.MessageID)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
