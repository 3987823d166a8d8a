package actors_test

import (
	"testing"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu/feishutest"
)

// A reply with [[reply_to_current]] arrives on Discord as a native reply (message_reference
// to the user's message), sent anew in place of the draft, without the directive.
func TestDiscordQuotedReply(t *testing.T) {
	r, srv := discordRig(t, "[[reply_to_current]] Quoted.")
	id := srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", Content: "hi"})
	until(t, "the draft", func() bool { return len(srv.Sent("dm1")) == 1 })
	close(r.gate)
	var got discordtest.Message
	until(t, "the answer", func() bool {
		for _, m := range srv.SentMessages("dm1") {
			if m.Content != "…" {
				got = m
				return true
			}
		}
		return false
	})
	r.outboxEmpty()
	if got.Content != "Quoted." || got.ReplyTo != id {
		t.Errorf("answer %q replying to %q, want %q replying to %q", got.Content, got.ReplyTo, "Quoted.", id)
	}
	if sent := srv.Sent("dm1"); len(sent) != 1 {
		t.Errorf("the channel shows %q, want only the answer (the draft deleted)", sent)
	}
}

// A reply with [[reply_to_current]] arrives on Feishu through the reply API, quoting the
// user's message, sent anew in place of the draft, without the directive.
func TestFeishuQuotedReply(t *testing.T) {
	r, srv := feishuRig(t, feishutest.Config{}, "[[reply_to_current]] Quoted.")
	id := srv.UserSays("oc_dm", "ou_alice", "hi")
	until(t, "the draft", func() bool { return feishuHas(srv.Messages(), "…") })
	close(r.gate)
	until(t, "the answer", func() bool { return feishuHas(srv.Messages(), "Quoted.") })
	r.outboxEmpty()
	for _, m := range srv.Messages() {
		if m.Text == "Quoted." && m.ReplyTo != id {
			t.Errorf("the answer replies to %q, want %q", m.ReplyTo, id)
		}
	}
	if sent := srv.Sent("oc_dm"); len(sent) != 1 || sent[0] != "Quoted." {
		t.Errorf("the chat shows %q, want only the answer (the draft recalled)", sent)
	}
}
