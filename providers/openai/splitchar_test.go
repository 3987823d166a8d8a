package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestCharactersCutAcrossChunks: a proxy that cuts every emoji's surrogate pair across two
// chunks loses no character of the content, the reasoning or the tool call's arguments (#33.16).
func TestCharactersCutAcrossChunks(t *testing.T) {
	text, reasoning, args := "Done 😀 — see 🎉🎉 here 👍🏽", "thinking 🤔 hard", `{"text":"hi 🌊 reef"}`
	c, _ := newClient(t, fake.Reply{Text: text, Reasoning: reasoning, SplitChars: true,
		ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "message", Arguments: args}}})
	a, err := call(context.Background(), c, providers.Request{Model: "m", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != text || a.Reasoning != reasoning {
		t.Errorf("got text %q reasoning %q, want %q and %q", a.Text, a.Reasoning, text, reasoning)
	}
	if len(a.Calls) != 1 || a.Calls[0].Arguments != args {
		t.Errorf("got calls %+v, want arguments %s", a.Calls, args)
	}
}

// TestResponseBytesBounded: arguments past MaxResponseBytes stop the stream (#39.5).
func TestResponseBytesBounded(t *testing.T) {
	srv := openaitest.NewServer(fake.NewScript(fake.Reply{
		ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "write", Arguments: `{"content":"` + strings.Repeat("x", 200_000) + `"}`}}}))
	t.Cleanup(srv.Close)
	c := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: canary, IdleTimeout: 2 * time.Second, MaxResponseBytes: 64 << 10})
	a, err := call(context.Background(), c, providers.Request{Model: "m", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}}})
	if !errors.Is(err, providers.ErrResponseTooLarge) {
		t.Fatalf("got %v, want ErrResponseTooLarge", err)
	}
	if len(a.Calls) != 0 {
		t.Errorf("got %d tool calls from a response cut at its bound", len(a.Calls))
	}
}
