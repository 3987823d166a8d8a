package openaiapi

import (
	"testing"

	"github.com/reefgw/reef/messages"
)

func TestLiveText(t *testing.T) {
	delta := func(s string) messages.RunEvent { return messages.RunEvent{Kind: messages.RunTextDelta, Text: s} }
	tool := messages.RunEvent{Kind: messages.RunToolStart, Name: "ls"}
	tests := []struct {
		name   string
		events []messages.RunEvent
		reply  string
		want   string // everything shown
	}{
		{"nothing live", nil, "Hello", "Hello"},
		{"all live", []messages.RunEvent{delta("Hello\n"), delta("World")}, "Hello\nWorld", "Hello\nWorld"},
		{"trailing newline trimmed from the reply", []messages.RunEvent{delta("Hello\n")}, "Hello", "Hello\n"},
		{"the rest of the line", []messages.RunEvent{delta("Hello\n")}, "Hello\nWorld", "Hello\nWorld"},
		{"a step before a tool call", []messages.RunEvent{delta("Let me look.\n"), tool, delta("It says hi.")}, "It says hi.",
			"Let me look.\n\nIt says hi."},
		{"a step, then a reply not streamed", []messages.RunEvent{delta("Let me look."), tool}, "It says hi.",
			"Let me look.\n\nIt says hi."},
		{"a different reply (a failure)", []messages.RunEvent{delta("Half an ans")}, "Sorry, something went wrong.",
			"Half an ans\n\nSorry, something went wrong."},
	}
	for _, tt := range tests {
		var l liveText
		got := ""
		for _, ev := range tt.events {
			got += l.take(ev)
		}
		got += l.rest(tt.reply)
		if got != tt.want {
			t.Errorf("%s: shown %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The reply and the run's text.delta events come on two streams: a reply that arrives before
// the last deltas shows them, and the deltas that come after are not shown again.
func TestLiveTextReplyBeforeItsDeltas(t *testing.T) {
	delta := func(s string) messages.RunEvent { return messages.RunEvent{Kind: messages.RunTextDelta, Text: s} }
	for _, tt := range []struct {
		name         string
		before       []messages.RunEvent
		reply        string
		after        []messages.RunEvent
		want         string
		wantAfterAll string
	}{
		{"part streamed", []messages.RunEvent{delta("echo "), delta("hello ")}, "echo hello (message 1)",
			[]messages.RunEvent{delta("(message "), delta("1)")}, "echo hello (message 1)", ""},
		{"nothing streamed yet", nil, "echo hello",
			[]messages.RunEvent{delta("echo "), delta("hello")}, "echo hello", ""},
	} {
		var l liveText
		got := ""
		for _, ev := range tt.before {
			got += l.take(ev)
		}
		got += l.rest(tt.reply)
		late := ""
		for _, ev := range tt.after {
			late += l.take(ev)
		}
		if got != tt.want || late != tt.wantAfterAll {
			t.Errorf("%s: shown %q then %q, want %q then %q", tt.name, got, late, tt.want, tt.wantAfterAll)
		}
	}
}
