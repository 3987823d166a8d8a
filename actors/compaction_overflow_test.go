package actors_test

import (
	"strings"
	"testing"

	fakellm "github.com/reefgw/reef/providers/fake"
)

// TestCompactionOverflowRetry: the provider reports a context overflow; the run compacts and
// repeats the call once, and the user gets the answer.
func TestCompactionOverflowRetry(t *testing.T) {
	script := fakellm.NewScript()
	h := newHarness(t, harnessOpts{script: script})
	for i, text := range []string{"my project id is " + projectID, "second", "third"} {
		h.say("1", text)
		h.reply()
		_ = i
	}
	script.Add(fakellm.Reply{Overflow: true}, fakellm.Reply{Text: "Identifiers: project id " + projectID + "."},
		fakellm.Reply{Text: "after the retry"})
	n := len(script.Requests())
	h.say("1", "fourth")
	if out := h.reply(); out.Text != "after the retry" {
		t.Fatalf("reply = %q, want the answer of the repeated call", out.Text)
	}
	reqs := script.Requests()[n:]
	if len(reqs) != 3 || !isSummaryCall(reqs[1]) {
		t.Fatalf("got %d requests after the overflow, want the overflowing one, a summary call, the retry", len(reqs))
	}
	if !strings.Contains(reqs[1].Messages[0].Content, projectID) {
		t.Error("the summary call does not carry the first message")
	}
	if s, ok := summaryIn(reqs[2]); !ok || !strings.Contains(s, projectID) {
		t.Errorf("the retried request has no summary with the project id")
	}
	if len(reqs[2].Messages) >= len(reqs[0].Messages) {
		t.Errorf("the retried request has %d messages, the overflowing one %d: nothing was compacted", len(reqs[2].Messages), len(reqs[0].Messages))
	}
	if requestHas(reqs[2], "my project id is") {
		t.Error("the retried request still holds the first message")
	}
	if snap, ok := latestSnapshot(t, h, "1"); !ok || !strings.Contains(snap.Summary, projectID) {
		t.Errorf("no snapshot stored for the compaction: %+v", snap)
	}
}

// TestCompactionSecondOverflowFails: an overflow right after the compaction ends the run with
// the friendly message; the session goes on.
func TestCompactionSecondOverflowFails(t *testing.T) {
	script := fakellm.NewScript()
	h := newHarness(t, harnessOpts{script: script})
	for _, text := range []string{"one", "two", "three"} {
		h.say("1", text)
		h.reply()
	}
	script.Add(fakellm.Reply{Overflow: true}, fakellm.Reply{Text: "summary"}, fakellm.Reply{Overflow: true})
	n := len(script.Requests())
	h.say("1", "four")
	out := h.reply()
	if !strings.Contains(out.Text, "no longer fits in the model's context window") {
		t.Fatalf("reply = %q, want the context-overflow message", out.Text)
	}
	if got := len(script.Requests()) - n; got != 3 {
		t.Errorf("%d requests for the run, want 3 (overflow, summary, overflow): the retry happens once", got)
	}
	h.say("1", "five")
	if out := h.reply(); out.Text != "ok" {
		t.Errorf("next reply = %q, want the session to go on", out.Text)
	}
}
