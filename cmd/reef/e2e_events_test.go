package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// follower is a `reef events` child.
type follower struct {
	stdout, stderr *syncBuffer
	exited         chan struct{}
	code           int
	signal         func(os.Signal) error
}

// follow starts `reef events args...` and waits until it says it follows.
func follow(t *testing.T, e env, args ...string) *follower {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eLife)
	cmd := command(ctx, e, append([]string{"events"}, args...)...)
	f := &follower{stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{}), code: -1}
	cmd.Stdout, cmd.Stderr = f.stdout, f.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	f.signal = cmd.Process.Signal
	go func() {
		cmd.Wait()
		f.code = cmd.ProcessState.ExitCode()
		cancel()
		close(f.exited)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-f.exited })
	if !eventually(e2eReady, func() bool { return strings.Contains(f.stderr.String(), "following") }) {
		t.Fatalf("reef events did not start following:\n%s", f.stderr)
	}
	return f
}

// exit waits for the follower to end and returns its exit code.
func (f *follower) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-f.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("reef events still running 20s later:\n%s", f.stderr)
	}
	return f.code
}

// TestE2EEventsFollowARun runs `reef gateway` with a Telegram fake and `reef events -json`
// beside it: a run with three tool calls (read, update_plan, ls) prints its events as JSON
// lines, in order; Ctrl-C ends the follower with status 0. A readable follower prints the
// run's lines and exits 0 when the gateway stops.
func TestE2EEventsFollowARun(t *testing.T) {
	tg := telegramtest.NewWithToken(t, tgToken)
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		results := 0
		for _, m := range req.Messages {
			if m.Role == messages.RoleTool {
				results++
			}
		}
		switch results {
		case 0:
			return fake.Reply{Text: "Let me look.", ToolCalls: []messages.ToolCall{{ID: "r1", Name: "read", Arguments: `{"path":"notes.txt"}`}}}
		case 1:
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "p1", Name: "update_plan",
				Arguments: `{"steps":[{"id":"a","title":"Read the notes","status":"done"},{"id":"b","title":"List files","status":"running"}]}`}}}
		case 2:
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "l1", Name: "ls", Arguments: `{"path":"."}`}}}
		}
		return fake.Reply{Text: "All done.\n```openclaw-process\n{\"type\":\"final\",\"summary\":\"notes read\"}\n```"}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	home, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["500"]`))
	n := newNode(t, e)
	if err := os.WriteFile(filepath.Join(home, "workspace", "notes.txt"), []byte("sunny"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonl := follow(t, e, "-json")
	live := follow(t, e)

	tg.UserSays(500, 500, "read my notes")
	if !eventually(60*time.Second, func() bool { return slices.Contains(tg.Sent(500), "All done.") }) {
		t.Fatalf("no answer without the block: %q; logs:\n%s", tg.Sent(500), tail(n.logs(), 4000))
	}
	if !eventually(30*time.Second, func() bool { return strings.Contains(jsonl.stdout.String(), `"run.end"`) }) {
		t.Fatalf("no run.end from reef events -json:\n%s", jsonl.stdout)
	}
	var kinds []string
	var seq uint64
	for _, line := range strings.Split(strings.TrimSpace(jsonl.stdout.String()), "\n") {
		var ev messages.RunEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON event: %q", line)
		}
		if ev.Seq <= seq || !strings.HasPrefix(ev.Session, "agent:main:telegram:") || ev.Run == "" {
			t.Errorf("event %s: seq %d (after %d), session %q, run %q", ev.Kind, ev.Seq, seq, ev.Session, ev.Run)
		}
		seq = ev.Seq
		k := string(ev.Kind)
		if ev.Name != "" {
			k += " " + ev.Name
		}
		if len(kinds) > 0 && k == "text.delta" && kinds[len(kinds)-1] == k {
			continue // an answer's text may come in several pieces
		}
		kinds = append(kinds, k)
	}
	want := []string{"run.start", "text.delta", "tool.start read", "tool.end read", "tool.start update_plan",
		"plan.update", "tool.end update_plan", "tool.start ls", "tool.end ls", "text.delta", "run.end"}
	if !slices.Equal(kinds, want) {
		t.Errorf("events:\n got %q\nwant %q", kinds, want)
	}
	if err := jsonl.signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := jsonl.exit(t); code != 0 {
		t.Errorf("reef events -json exit %d after Ctrl-C, want 0:\n%s", code, jsonl.stderr)
	}

	n.stop()
	if code := live.exit(t); code != 0 || !strings.Contains(live.stderr.String(), "the gateway stopped") {
		t.Errorf("reef events exit %d when the gateway stopped, want 0 and a word:\n%s", code, live.stderr)
	}
	out := live.stdout.String()
	for _, line := range []string{"→ read notes.txt", "✓ read", "[x] Read the notes", "[>] List files", "run ended: ok", "notes read"} {
		if !strings.Contains(out, line) {
			t.Errorf("the live view lacks %q:\n%s", line, out)
		}
	}
}

func TestFormatEvent(t *testing.T) {
	ok := true
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.Local)
	tests := []struct {
		ev   messages.RunEvent
		want string
	}{
		{messages.RunEvent{Kind: messages.RunTextDelta, Text: "\nfirst\n\nsecond\nthird\n"}, "12:00:00 says: first (+2 lines)\n"},
		{messages.RunEvent{Kind: messages.RunToolStart, Summary: "exec: echo \x1b[31mred"}, "12:00:00 → exec: echo red\n"},
		{messages.RunEvent{Kind: messages.RunToolEnd, Name: "read", OK: &ok, MS: 12}, "12:00:00 ✓ read (12 ms)\n"},
		{messages.RunEvent{Kind: messages.RunToolEnd, Name: "read", MS: 3}, "12:00:00 ✗ read (3 ms)\n"},
		{messages.RunEvent{Kind: messages.RunToolEnd, Name: "exec", MS: 5, Status: messages.ToolEndStopped}, "12:00:00 ■ exec stopped (5 ms)\n"},
		{messages.RunEvent{Kind: messages.RunPlanUpdate, Steps: []messages.PlanStep{{Title: "A", Status: "done"},
			{Title: "B", Status: "running", Progress: 40}, {Title: "C", Status: "error", Error: "boom"}}},
			"12:00:00 plan\n12:00:00   [x] A\n12:00:00   [>] B (40%)\n12:00:00   [!] C — boom\n"},
		{messages.RunEvent{Kind: messages.RunEnd, Status: "ok", Tokens: 42, MS: 1500, Summary: "done"}, "12:00:00 run ended: ok, 42 tokens, 1.5 s — done\n"},
		{messages.RunEvent{Kind: messages.EventsLost, Lost: 7}, "12:00:00 (7 events lost: this view fell behind)\n"},
	}
	for _, tc := range tests {
		tc.ev.Time = at
		if got := formatEvent(tc.ev, false); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.ev.Kind, got, tc.want)
		}
	}
}
