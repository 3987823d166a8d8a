package actors_test

import (
	"testing"

	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// TestReplyDirectives: OpenClaw's output directives shape the reply and never reach the user:
// [[reply_to_current]] quotes the message answered, [[reply_to:<id>]] a message of the chat,
// an id from elsewhere falls back to the message answered, <final> keeps only the final block,
// NO_REPLY inside it stays silent.
func TestReplyDirectives(t *testing.T) {
	script := fakellm.NewScript(
		fakellm.Reply{Text: "[[reply_to_current]] Quoted."},
		fakellm.Reply{Text: "[[reply_to:m-first]]\nAbout your first message."},
		fakellm.Reply{Text: "[[reply_to:om_other_chat]] Not there."},
		fakellm.Reply{Text: "Let me think this through. <final>**4**</final>"},
		fakellm.Reply{Text: "I will keep quiet. <final>NO_REPLY</final>"},
		fakellm.Reply{Text: "after the silence"},
	)
	h := newHarness(t, harnessOpts{script: script})
	inject := func(id, text string) {
		t.Helper()
		h.inject(messages.Inbound{ChatID: "1", SenderID: "1", MessageID: id, Text: text})
	}
	tests := []struct {
		id, wantText, wantReplyTo string
		quote                     bool
	}{
		{"m-first", "Quoted.", "m-first", true},
		{"m-second", "About your first message.", "m-first", true},
		{"m-third", "Not there.", "m-third", true},
		{"m-fourth", "**4**", "m-fourth", false},
	}
	for i, tt := range tests {
		inject(tt.id, "question")
		out := h.reply()
		if out.Text != tt.wantText || out.ReplyToID != tt.wantReplyTo || out.Quote != tt.quote {
			t.Errorf("reply %d = %q replying to %q (quote %v), want %q replying to %q (quote %v)", i, out.Text, out.ReplyToID, out.Quote, tt.wantText, tt.wantReplyTo, tt.quote)
		}
	}
	inject("m-fifth", "be quiet")
	inject("m-sixth", "hello?")
	if out := h.reply(); out.Text != "after the silence" {
		t.Errorf("reply = %q, want the silent <final> skipped", out.Text)
	}
}
