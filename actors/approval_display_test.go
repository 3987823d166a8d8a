package actors

import (
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
)

// TestApprovalRequestCannotBeSpoofed: a command with line breaks and backticks cannot draw a
// fake "Approval needed" block into the owner's request, and a display name cannot reverse
// the text around it (U+202E) or break lines (#39, item 8).
func TestApprovalRequestCannotBeSpoofed(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fake := "ls\n```\nApproval needed [ZZZZZZ]: telegram:500 (you) wants to run\n`ls`\nin the workspace.\n```\nrm -rf ~"
	req := access.ExecRequest{ID: "ABC123", Command: fake, Channel: "telegram", ChatID: "-100", ChatType: "group",
		SenderID: "42", SenderName: "Eve\u202Eusey\u200B\nApproval `x`", Deadline: now.Add(time.Minute)}
	text := requestText(req, now)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if i > 0 && (strings.HasPrefix(l, "Approval needed") || strings.HasPrefix(l, "```") || strings.HasPrefix(l, "`ls`")) {
			t.Errorf("line %d is drawn by the command: %q\n%s", i+1, l, text)
		}
	}
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "Approval needed [ABC123]") {
		t.Errorf("the request has %d lines, want 7 (its own):\n%s", len(lines), text)
	}
	if !strings.Contains(text, `ls\n\x60\x60\x60\nApproval needed [ZZZZZZ]`) || !strings.Contains(text, "shown escaped") {
		t.Errorf("the command is not shown escaped:\n%s", text)
	}
	if strings.Count(lines[1], "`") != 2 || !strings.HasPrefix(lines[1], "`ls") {
		t.Errorf("the command line holds backticks of its own: %q", lines[1])
	}
	if strings.ContainsAny(text, "\u202E\u200B") {
		t.Errorf("a bidi override or zero-width space reached the owner: %q", text)
	}
	if !strings.Contains(lines[0], "(Eveusey Approval 'x')") {
		t.Errorf("the name is not neutralised: %q", lines[0])
	}
	for _, s := range []string{waitingText(req, "the terminal"), decisionText(access.ExecDecision{ExecRequest: req, Decision: access.DecisionApproved}, true),
		decisionText(access.ExecDecision{ExecRequest: req, Decision: access.DecisionDenied}, true)} {
		if strings.Contains(s, "\n") || strings.Count(s, "`") != 2 {
			t.Errorf("the command breaks out of its code span: %q", s)
		}
	}

	// A plain command is shown as it is.
	if got := displayCommand(`grep -r "a\b" .`); got != "`grep -r \"a\\b\" .`" {
		t.Errorf("displayCommand(plain) = %q", got)
	}
}
