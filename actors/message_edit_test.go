package actors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// startWith runs one agent with the message tool on ch (named name), answering from script.
func startWith(t *testing.T, name string, ch channels.Channel, script *fakellm.Script) {
	t.Helper()
	reg, policy := messageTools(t)
	startAgent(t, &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: fakellm.New(script), Tools: reg, Policy: policy, ContextWindow: 128000}, name, ch, nil)
}

// lastToolResults are the tool results the model saw in its last request.
func lastToolResults(script *fakellm.Script) []string {
	reqs := script.Requests()
	var out []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == messages.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// editScript: send a note, edit it (messageId: the default, the last one sent), try to edit
// the user's message (refused), delete the note, answer.
func editScript(userMessageID string) *fakellm.Script {
	return fakellm.NewScript(
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("m1", "message", map[string]any{"action": "send", "message": "Working on it…"})}},
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("m2", "message", map[string]any{"action": "edit", "message": "Almost done"})}},
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("m3", "message", map[string]any{"action": "edit", "messageId": userMessageID, "message": "rewritten"})}},
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("m4", "message", map[string]any{"action": "delete"})}},
		fakellm.Reply{Text: "Done."},
	)
}

// checkEditResults checks what the model was told by each call of editScript.
func checkEditResults(t *testing.T, script *fakellm.Script, sentID string) {
	t.Helper()
	got := lastToolResults(script)
	want := []string{"sent (messageId " + sentID + ")", "edited (messageId " + sentID + ")",
		"not one reef sent in this conversation", "deleted (messageId " + sentID + ")"}
	if len(got) != len(want) {
		t.Fatalf("tool results %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("tool result %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

// TestMessageEditDeleteTelegram: on the Telegram wire fake, the message tool's send names
// the message it sent, edit changes it (editMessageText), delete removes it
// (deleteMessage), and the user's own message cannot be edited.
func TestMessageEditDeleteTelegram(t *testing.T) {
	srv := telegramtest.New(t)
	bot := telegramBot(t, srv)
	user := srv.Message(5, telego.ChatTypePrivate, 5, "please work on it")
	script := editScript(itoa(user.MessageID))
	startWith(t, "telegram", bot, script)
	srv.Queue(telego.Update{Message: user})

	var note, final telegramtest.SentMessage
	if !pollFor(30*time.Second, func() bool {
		note, final = telegramtest.SentMessage{}, telegramtest.SentMessage{}
		for _, m := range srv.Messages(5) {
			switch {
			case m.Text == "Almost done":
				note = m
			case m.Text == "Done." && !m.Deleted:
				final = m
			}
		}
		return note.Deleted && final.MessageID != 0
	}) {
		t.Fatalf("messages %+v: want the note edited to \"Almost done\" and deleted, then \"Done.\"", srv.Messages(5))
	}
	if note.Edits == 0 {
		t.Error("the note was never edited")
	}
	checkEditResults(t, script, "5:"+itoa(note.MessageID))
	for _, m := range srv.Messages(5) {
		if m.Text == "rewritten" {
			t.Errorf("a message reads %q: the user's message was edited", m.Text)
		}
	}
}

// pollFor polls cond until it holds or timeout passes, and reports whether it held.
func pollFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// TestMessageEditDeleteDiscord: the same on the Discord wire fake (PATCH and DELETE
// /channels/{id}/messages/{mid}); a message the bot did not send is refused.
func TestMessageEditDeleteDiscord(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL}, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	script := editScript("123456789012345678")
	startWith(t, "discord", bot, script)
	until(t, "the gateway session", srv.Connected)
	srv.UserSays(t, "dm1", "7", "please work on it")
	var note discordtest.Message
	until(t, "the note edited and deleted, then the answer", func() bool {
		note = discordtest.Message{}
		for _, m := range srv.SentMessages("dm1") {
			if edits := srv.Edits(m.ID); len(edits) > 0 && edits[len(edits)-1] == "Almost done" {
				note = m
			}
		}
		sent := srv.Sent("dm1")
		return note.Deleted && len(sent) > 0 && sent[len(sent)-1] == "Done."
	})
	checkEditResults(t, script, note.ID)
}

// TestMessageEditDeleteFeishu: the same on the Feishu wire fake (PUT and DELETE
// /open-apis/im/v1/messages/{id}); the user's message is refused.
func TestMessageEditDeleteFeishu(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	bot, err := feishu.New(srv.BotConfig(), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	script := editScript("om_not_sent_by_the_bot")
	startWith(t, "feishu", bot, script)
	until(t, "the long connection", srv.Connected)
	srv.UserSays("oc_chat1", "ou_user1", "please work on it")
	var note feishutest.SentMessage
	until(t, "the note edited and recalled, then the answer", func() bool {
		note = feishutest.SentMessage{}
		for _, m := range srv.Messages() {
			if m.Text == "Almost done" {
				note = m
			}
		}
		sent := srv.Sent("oc_chat1")
		return note.Recalled && len(sent) > 0 && sent[len(sent)-1] == "Done."
	})
	checkEditResults(t, script, note.ID)
}
