package actors_test

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/message"
)

// TestMessageToolAndSilentReplies: the message tool delivers during the run; a final reply
// that only repeats it is not delivered twice; a different final reply is; the silent token
// is never delivered.
func TestMessageToolAndSilentReplies(t *testing.T) {
	send := func(id, text string) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call(id, "message", map[string]any{"text": text})}}
	}
	script := fakellm.NewScript(
		send("m1", "Working on it: step 1 of 2."), fakellm.Reply{Text: "  working on it:   step 1 of 2. "},
		send("m2", "Found 3 files."), fakellm.Reply{Text: "Done: all 3 files cleaned."},
		fakellm.Reply{Text: "NO_REPLY"},
		fakellm.Reply{Text: "still here"},
	)
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{message.New()}})

	h.say("1", "go")
	if out := h.reply(); out.Text != "Working on it: step 1 of 2." {
		t.Fatalf("first message = %q", out.Text)
	}
	// The tool answers once the platform took the message (with its id), so the run may
	// still be going: wait for its end, or "again" would be steered into it.
	waitFor(t, func() bool {
		for _, e := range h.transcript("1") {
			if e.Role == messages.RoleAssistant && len(e.ToolCalls) == 0 && strings.Contains(e.Content, "step 1 of 2") {
				return true
			}
		}
		return false
	})
	h.say("1", "again")
	for _, want := range []string{"Found 3 files.", "Done: all 3 files cleaned."} {
		if out := h.reply(); out.Text != want {
			t.Fatalf("message = %q, want %q (the repeat of run 1 must not have been delivered)", out.Text, want)
		}
	}
	h.say("1", "quiet please")
	h.say("1", "hello?")
	if out := h.reply(); out.Text != "still here" {
		t.Fatalf("reply = %q, want the silent reply skipped", out.Text)
	}
	checkPairs(t, h.transcript("1"))
}
