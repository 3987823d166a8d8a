package streaming

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
)

func tool(kind messages.TurnEventKind, id, label string, isErr bool) messages.TurnEvent {
	return messages.TurnEvent{Kind: kind, StepID: id, Label: label, IsError: isErr}
}

func TestProgressDraft(t *testing.T) {
	s := Defaults()
	s.Label, s.MaxLines = "Working", 4
	d := New(s, "chat", nil)
	if got := d.Render(); got != "Working…" {
		t.Errorf("before any event = %q", got)
	}
	for _, ev := range []messages.TurnEvent{
		tool(messages.ToolStarted, "1", "read notes.txt", false),
		tool(messages.ToolFinished, "1", "", false),
		{Kind: messages.PlanUpdated, Steps: []messages.PlanStep{
			{ID: "a", Title: "Collect", Status: messages.StepDone},
			{ID: "b", Title: "Analyse", Status: messages.StepRunning, Progress: 40}}},
		tool(messages.ToolStarted, "2", "exec: curl\nwttr.in", false),
		tool(messages.ToolFinished, "2", "", true),
		tool(messages.ToolStarted, "3", "web_fetch "+strings.Repeat("x", 300), false),
	} {
		if !d.Apply(ev) {
			t.Errorf("Apply(%v) = false, want a change", ev.Kind)
		}
	}
	want := "Working…\n[x] Collect\n[~] Analyse 40%\n✗ exec: curl wttr.in\n▸ web_fetch " + strings.Repeat("x", 120-len("▸ web_fetch ")+2-1) + "…"
	got := d.Render()
	if got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
	if d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, Text: "hello"}) {
		t.Error("streamed text changes a progress draft")
	}
}

// TestProgressWithoutToolLinesOrLabel: with label false and toolProgress false the draft
// shows neither tool nor plan lines, as OpenClaw does (#33 point 15); with a label and
// toolProgress false it shows the label and the plan.
func TestProgressWithoutToolLinesOrLabel(t *testing.T) {
	s := Defaults()
	s.Label, s.ToolProgress = "", false
	d := New(s, "chat", nil)
	if d.Apply(tool(messages.ToolStarted, "1", "ls", false)) || d.Render() != "…" {
		t.Errorf("tool lines shown with toolProgress false: %q", d.Render())
	}
	plan := messages.TurnEvent{Kind: messages.PlanUpdated, Steps: []messages.PlanStep{{ID: "a", Title: "One"}}}
	if d.Apply(plan) || d.Render() != "…" {
		t.Errorf("Render = %q, want no plan lines without a label and tool lines", d.Render())
	}
	s.Label = "Busy"
	d = New(s, "chat", nil)
	d.Apply(tool(messages.ToolStarted, "1", "ls", false))
	if !d.Apply(plan) || d.Render() != "Busy…\n[ ] One" {
		t.Errorf("Render = %q, want the label and the plan", d.Render())
	}
}

func TestAutoLabel(t *testing.T) {
	s := Defaults()
	s.Labels = []string{"Brewing"}
	if got := New(s, "any", nil).Render(); got != "Brewing…" {
		t.Errorf("auto with one word = %q", got)
	}
	s.Labels = nil
	a, b := New(s, "chat-1", nil).Render(), New(s, "chat-1", nil).Render()
	if a != b || !strings.HasSuffix(a, "…") || len(a) < 4 {
		t.Errorf("auto label = %q then %q, want the same word for the same chat", a, b)
	}
}

func TestPartialAndBlock(t *testing.T) {
	clean := func(s string) string { return strings.ReplaceAll(s, "[[reply_to_current]]", "") }
	p := Defaults()
	p.Mode = Partial
	d := New(p, "c", clean)
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: "[[reply_to_current]]Looking\n"})
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: "more\n"})
	if got := d.Render(); got != "Looking\nmore" {
		t.Errorf("partial = %q", got)
	}
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "2", Text: "Next step\n"})
	if got := d.Render(); got != "Next step" {
		t.Errorf("a new step starts anew: %q", got)
	}
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "2", Text: strings.Repeat("word ", 600)})
	if got := d.Render(); utf8.RuneCountInString(got) > maxRunes || !strings.HasSuffix(got, "word…") {
		t.Errorf("a long partial draft has %d characters ending %q, want at most %d ending in a whole word and …",
			utf8.RuneCountInString(got), got[len(got)-10:], maxRunes)
	}

	b := Defaults()
	b.Mode, b.BlockMinChars = Block, 20
	d = New(b, "c", nil)
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: "First para.\n"})
	if got := d.Render(); got != "…" {
		t.Errorf("block before a paragraph ends = %q", got)
	}
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: "\nSecond\n"})
	if got := d.Render(); got != "First para." {
		t.Errorf("block after a paragraph = %q", got)
	}
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: "goes on and on and on\n"})
	if got := d.Render(); got != "First para.\n\nSecond\ngoes on and on and on" {
		t.Errorf("block after minChars = %q", got)
	}
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: "Done"})
	if !d.Apply(tool(messages.ToolStarted, "1", "ls", false)) {
		t.Error("a tool call after the text does not show the step's last piece")
	}
	if got := d.Render(); got != "First para.\n\nSecond\ngoes on and on and on\nDone" || strings.Contains(got, "ls") {
		t.Errorf("block once the step's text is complete = %q", got)
	}
}
