package terminal

// Interactive mode: the prompt, progress lines, the line editor and what the terminal shows
// of text from outside. The harness is in terminal_test.go.

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
)

func TestInteractiveModeShowsPromptGreetingAndToolLines(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	h := start(t, Config{In: pr, Interactive: true, Greeting: "hello from reef"}, nil)
	go pw.Write([]byte("list files\n"))
	h.next()
	h.answer("here they are",
		messages.TurnEvent{Kind: messages.TurnStarted},
		messages.TurnEvent{Kind: messages.TextDelta, Text: "  Let me look.\n"},
		messages.TurnEvent{Kind: messages.ToolStarted, StepID: "c1", Label: "ls ."},
		messages.TurnEvent{Kind: messages.ToolFinished, StepID: "c1", Label: "ls ."},
		messages.TurnEvent{Kind: messages.ToolStarted, StepID: "c2", Label: "read secret.txt"},
		messages.TurnEvent{Kind: messages.ToolFinished, StepID: "c2", Label: "read secret.txt", IsError: true},
		messages.TurnEvent{Kind: messages.PlanUpdated, Steps: []messages.PlanStep{
			{ID: "a", Title: "List", Status: messages.StepDone}, {ID: "b", Title: "Read", Status: messages.StepRunning, Progress: 50}}},
		messages.TurnEvent{Kind: messages.PlanUpdated, Steps: []messages.PlanStep{
			{ID: "a", Title: "List", Status: messages.StepDone}, {ID: "b", Title: "Read", Status: messages.StepError}}},
	)
	waitFor(t, h.out, "here they are\n\n› ")
	pw.Close() // Ctrl-D
	h.waitDone()
	wantInfo := "hello from reef\nLet me look.\n  · ls .\n  · read secret.txt\n  ✗ read secret.txt\n" +
		"  [x] List\n  [~] Read 50%\n  [!] Read\n" // the plan: each step when it changes
	if got := h.info.String(); got != wantInfo {
		t.Errorf("Info = %q, want %q", got, wantInfo)
	}
	// At the end of input the prompt's line is ended, so the shell's prompt has its own.
	wantOut := "› \nhere they are\n\n› \n"
	if got := h.out.String(); got != wantOut {
		t.Errorf("Out = %q, want %q", got, wantOut)
	}
}

// waitFor waits until b holds want.
func waitFor(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never written; got %q", want, b.String())
		}
		time.Sleep(5 * time.Millisecond) // bounded polling of the terminal's output
	}
}

// TestInteractiveModeReadsDuringARun: a line typed while a run goes is delivered at once
// (a command is answered at once, other text is queued by the session), and the terminal
// shows what the session did with it; the prompt comes back only when the run ended.
func TestInteractiveModeReadsDuringARun(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	h := start(t, Config{In: pr, Interactive: true}, nil)
	go pw.Write([]byte("first\n"))
	h.next()
	h.term.Progress(context.Background(), messages.TurnEvent{Kind: messages.TurnStarted})
	go pw.Write([]byte("/status\n"))
	if got := h.next(); got.Text != "/status" {
		t.Fatalf("delivered %q during the run, want /status", got.Text)
	}
	if !h.term.Busy() {
		t.Error("Busy() = false while the run goes")
	}
	h.term.Progress(context.Background(), messages.TurnEvent{Kind: messages.MessageQueued, Label: "queued: answered after the current run"})
	waitFor(t, h.info, "  ↳ queued: answered after the current run\n")
	if got := strings.Count(h.out.String(), "› "); got != 1 {
		t.Errorf("%d prompts during the run, want 1: %q", got, h.out.String())
	}
	h.answer("done")
	waitFor(t, h.out, "done\n\n› ")
	if h.term.Busy() {
		t.Error("Busy() = true after the run ended")
	}
}

// TestLineEditor: with the line editor, Ctrl-L clears the screen and keeps the line being
// typed, a reply printed while typing leaves that line below it, everything goes to Out,
// and colours are used when asked for.
func TestLineEditor(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	h := start(t, Config{In: pr, Interactive: true, LineEditor: true, Color: true}, nil)
	waitFor(t, h.out, "\x1b[1;36m› \x1b[0m")
	pw.Write([]byte("hel"))
	pw.Write([]byte("\x0c"))
	waitFor(t, h.out, "\x1b[2J\x1b[H")
	pw.Write([]byte("lo\r"))
	if got := h.next(); got.Text != "hello" {
		t.Errorf("delivered %q, want hello", got.Text)
	}
	h.term.Progress(context.Background(), messages.TurnEvent{Kind: messages.ToolStarted, Label: "exec: ls"})
	pw.Write([]byte("more"))
	h.answer("reply")
	waitFor(t, h.out, "\r\nreply\r\n\r\n\x1b[1;36m› \x1b[0mmore")
	if got := h.out.String(); !strings.Contains(got, "\x1b[2m  · exec: ls\x1b[0m") {
		t.Errorf("no dim tool line in %q", got)
	}
	if got := h.info.String(); got != "" {
		t.Errorf("Info = %q, want everything on Out", got)
	}
	if _, err := h.term.Send(context.Background(), messages.Outbound{ChatID: ChatID, Text: "It failed.", Failed: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h.out, "\x1b[31mIt failed.\x1b[0m")
	pw.Write([]byte("\x15\x04")) // Ctrl-U, Ctrl-D
	h.waitDone()
	if got := h.out.String(); !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("Out ends %q, want the prompt erased", got[max(0, len(got)-30):])
	}
}

// TestOutsideTextLosesTerminalControls: a reply, a progress line or a failure carrying
// escape sequences, carriage returns or bidi overrides (from a web page the model quoted,
// say) cannot clear, overwrite or reorder what the terminal shows (issue #20, finding 7).
func TestOutsideTextLosesTerminalControls(t *testing.T) {
	out, info := &syncBuffer{}, &syncBuffer{}
	term := New(Config{Out: out, Info: info, Interactive: true})
	evil := "\x1b[2K\rreef: \u202eapproved\x1b]0;title\x07"
	if _, err := term.Send(context.Background(), messages.Outbound{Text: "answer " + evil}); err != nil {
		t.Fatal(err)
	}
	term.Progress(context.Background(), messages.TurnEvent{Kind: messages.ToolStarted, Label: "web_fetch " + evil + "\nforged line"})
	term.Progress(context.Background(), messages.TurnEvent{Kind: messages.TextDelta, Text: "delta " + evil})
	for name, got := range map[string]string{"Out": out.String(), "Info": info.String()} {
		if strings.ContainsAny(got, "\x1b\r\u202e\a") || strings.Contains(got, "\nforged") {
			t.Errorf("%s = %q: terminal controls or a forged line got through", name, got)
		}
	}
	if got := out.String(); !strings.Contains(got, "answer reef: approved") {
		t.Errorf("Out = %q, want the reply's text without its controls", got)
	}
}
