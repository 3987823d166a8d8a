package anthropic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/anthropic/anthropictest"
	"github.com/reefgw/reef/providers/fake"
)

// TestCharactersCutAcrossDeltas: a proxy that cuts every emoji's surrogate pair across two
// events (`\uD83D` at the end of one text_delta, `\uDE00` at the start of the next) loses no
// character of the text, the thinking or the tool call's arguments (#33.16).
func TestCharactersCutAcrossDeltas(t *testing.T) {
	text, thinking, args := "Done 😀 — see 🎉🎉 here 👍🏽", "thinking 🤔 hard", `{"text":"hi 🌊 reef"}`
	c, _ := setup(t, fake.Reply{Text: text, Reasoning: thinking, SplitChars: true,
		ToolCalls: []messages.ToolCall{{ID: "toolu_1", Name: "message", Arguments: args}}})
	evs, err := collect(t, c, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	gotText, gotThinking, calls, _ := summarize(evs)
	if gotText != text || gotThinking != thinking {
		t.Errorf("got text %q thinking %q, want %q and %q", gotText, gotThinking, text, thinking)
	}
	if len(calls) != 1 || calls[0].Arguments != args {
		t.Errorf("got calls %+v, want arguments %s", calls, args)
	}
}

// TestResponseBytesBounded: a response past MaxResponseBytes (here a tool call's arguments
// that never end) stops the stream with ErrResponseTooLarge (#39.5).
func TestResponseBytesBounded(t *testing.T) {
	script := fake.NewScript(fake.Reply{Text: "a little text",
		ToolCalls: []messages.ToolCall{{ID: "toolu_1", Name: "write", Arguments: `{"content":"` + strings.Repeat("x", 200_000) + `"}`}}})
	srv := anthropictest.NewServer(script)
	t.Cleanup(srv.Close)
	c := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: canary, MaxResponseBytes: 64 << 10})
	evs, err := collect(t, c, userReq("hi"))
	if !errors.Is(err, providers.ErrResponseTooLarge) {
		t.Fatalf("got %v, want ErrResponseTooLarge", err)
	}
	if _, _, calls, _ := summarize(evs); len(calls) != 0 {
		t.Errorf("got %d tool calls from a response cut at its bound", len(calls))
	}
}
