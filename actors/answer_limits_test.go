package actors_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
	"github.com/reefgw/reef/tools"
)

// TestAnswerCapped: an answer past Limits.MaxAnswerChars is cut there, says so, and its tool
// calls are not run (#20 finding 8).
func TestAnswerCapped(t *testing.T) {
	ran := make(chan struct{}, 1)
	touch := &testTool{name: "touch", run: func(context.Context, tools.Call) (tools.Result, error) {
		ran <- struct{}{}
		return tools.Result{Content: "ok"}, nil
	}}
	long := strings.Repeat("é", 300_000) // 600 KB
	script := fakellm.NewScript(fakellm.Reply{Text: long, ToolCalls: []messages.ToolCall{call("t", "touch", map[string]any{})}})
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{touch}, limits: actors.Limits{MaxAnswerChars: 1000}})
	h.say("1", "talk a lot")
	out := h.reply()
	got := out.Text
	if out.MaxChunks != 20 {
		t.Errorf("reply MaxChunks = %d, want the default 20 (Limits.MaxReplyChunks)", out.MaxChunks)
	}
	if !strings.HasPrefix(got, strings.Repeat("é", 1000)+"\n") || strings.HasPrefix(got, strings.Repeat("é", 1001)) {
		t.Errorf("reply starts %q, want exactly 1000 characters of the answer", got[:min(len(got), 40)])
	}
	if n := utf8.RuneCountInString(got); n > 1200 || !strings.Contains(got, "cut at 1000 characters") {
		t.Errorf("reply has %d characters and ends %q; want the cut answer with a note", n, got[max(0, len(got)-120):])
	}
	select {
	case <-ran:
		t.Error("a tool call of the cut answer was run")
	default:
	}
	for _, e := range h.transcript("1") {
		if len(e.ToolCalls) > 0 || utf8.RuneCountInString(e.Content) > 1200 {
			t.Errorf("transcript entry %d: %d tool calls, %d characters", e.Seq, len(e.ToolCalls), utf8.RuneCountInString(e.Content))
		}
	}
}

// TestStreamTimeout: a model call that keeps the stream alive (keep-alives well inside the idle
// timeout) is stopped by Limits.StreamTimeout, and the user is told (#20 finding 8).
func TestStreamTimeout(t *testing.T) {
	script := fakellm.NewScript(fakellm.Reply{Hang: true, Keepalive: 20 * time.Millisecond})
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	p := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: "sk-test-0123456789", IdleTimeout: time.Minute})
	h := newHarness(t, harnessOpts{provider: p, limits: actors.Limits{StreamTimeout: 300 * time.Millisecond}})
	start := time.Now()
	h.say("1", "hello")
	if got := h.reply().Text; !strings.Contains(got, "answer took too long") {
		t.Errorf("reply = %q, want it to say the model's answer took too long", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestSummaryCapped: a compaction summary the model makes far too long is kept to
// Limits.MaxAnswerChars, like any answer (#20 finding 8).
func TestSummaryCapped(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		if isSummaryCall(r) {
			return fakellm.Reply{Text: strings.Repeat("summary ", 100_000)}
		}
		return fakellm.Reply{Text: "ok"}
	}
	h := newHarness(t, harnessOpts{script: script, limits: actors.Limits{MaxAnswerChars: 5000}})
	for turn := 1; turn <= 4; turn++ {
		h.say("1", filler(fmt.Sprintf("TURN-%d", turn), 7000))
		h.reply()
	}
	h.say("1", "/compact")
	if out := h.reply(); !strings.HasPrefix(out.Text, "Compacted: ") {
		t.Fatalf("/compact reply = %q", out.Text)
	}
	var snap persistence.Snapshot
	if err := h.store.View(func(r persistence.Reader) error {
		var err error
		snap, _, err = r.LatestSnapshot(h.key("1"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(snap.Summary); n == 0 || n > 5000 {
		t.Errorf("stored summary has %d characters, want 1..5000", n)
	}
}
