package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/fake"
)

// sent plays one "ok" reply for req and returns what the fake recorded.
func sent(t *testing.T, req providers.Request) fake.Request {
	t.Helper()
	c, script := setup(t, fake.Reply{Text: "ok"})
	if _, err := collect(t, c, req); err != nil {
		t.Fatalf("stream: %v", err)
	}
	reqs := script.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// body is the subset of the wire request the tests assert on.
type body struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	System    []struct {
		Type         string            `json:"type"`
		Text         string            `json:"text"`
		CacheControl map[string]string `json:"cache_control"`
	} `json:"system"`
	Messages []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

func decode(t *testing.T, raw []byte) body {
	t.Helper()
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	return b
}

func TestRequestHeadersAndSystemCache(t *testing.T) {
	stable := "You are reef. Tools: read_file, exec.\n"
	got := sent(t, providers.Request{
		Model: "claude-fake", System: stable + "Today is Monday.", SystemStable: len(stable),
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}},
	})
	if k := got.Header["X-Api-Key"]; len(k) != 1 || k[0] != canary {
		t.Errorf("got x-api-key %q, want the key", k)
	}
	if v := got.Header["Anthropic-Version"]; len(v) != 1 || v[0] != "2023-06-01" {
		t.Errorf("got anthropic-version %q", v)
	}
	if strings.Contains(string(got.Body), canary) {
		t.Error("request body contains the API key")
	}
	b := decode(t, got.Body)
	if !b.Stream || b.MaxTokens != anthropic.DefaultMaxTokens || b.Model != "claude-fake" {
		t.Errorf("got stream %v max_tokens %d model %q", b.Stream, b.MaxTokens, b.Model)
	}
	if len(b.System) != 2 {
		t.Fatalf("got %d system blocks, want 2", len(b.System))
	}
	if b.System[0].Text != stable || b.System[0].CacheControl["type"] != "ephemeral" {
		t.Errorf("stable block = %+v, want the stable prefix with cache_control ephemeral", b.System[0])
	}
	if b.System[1].Text != "Today is Monday." || b.System[1].CacheControl != nil {
		t.Errorf("volatile block = %+v, want the rest without cache_control", b.System[1])
	}
	if got.System != stable+"Today is Monday." {
		t.Errorf("fake recorded system %q", got.System)
	}
}

func TestRequestTranscript(t *testing.T) {
	in := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "list files"},
		{Role: messages.RoleUser, Content: "and read todo"},
		{Role: messages.RoleAssistant, Content: "Sure.", ToolCalls: []messages.ToolCall{
			{ID: "call_a", Name: "ls", Arguments: `{"dir":"."}`},
			{ID: "call.b", Name: "read_file", Arguments: `{"path": broken`},
		}},
		{Role: messages.RoleTool, ToolCallID: "call_a", ToolName: "ls", Content: "todo.md"},
		{Role: messages.RoleTool, ToolCallID: "call.b", ToolName: "read_file", Content: "bad arguments", IsError: true},
		{Role: messages.RoleSystem, Content: "timer fired"},
	}
	got := sent(t, providers.Request{Model: "claude-fake", Messages: in})
	want := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "list files\nand read todo"},
		{Role: messages.RoleAssistant, Content: "Sure.", ToolCalls: []messages.ToolCall{
			{ID: "call_a", Name: "ls", Arguments: `{"dir":"."}`},
			{ID: "call_b", Name: "read_file", Arguments: `{}`},
		}},
		{Role: messages.RoleTool, ToolCallID: "call_a", ToolName: "ls", Content: "todo.md"},
		{Role: messages.RoleTool, ToolCallID: "call_b", ToolName: "read_file", Content: "bad arguments", IsError: true},
		{Role: messages.RoleUser, Content: "[system event] timer fired"},
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	b := decode(t, got.Body)
	var roles []string
	for _, m := range b.Messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"user", "assistant", "user"}, roles); diff != "" {
		t.Errorf("roles must alternate (-want +got):\n%s", diff)
	}
	results := b.Messages[2].Content
	if len(results) != 3 || results[0]["type"] != "tool_result" || results[1]["type"] != "tool_result" || results[2]["type"] != "text" {
		t.Errorf("got last user content %v, want two tool_result blocks then the text", results)
	}
}

func TestRequestThinkingOffInToolLoop(t *testing.T) {
	in := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "what time is it"},
		{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "t1", Name: "now", Arguments: "{}"}}},
		{Role: messages.RoleTool, ToolCallID: "t1", ToolName: "now", Content: "12:00"},
	}
	b := decode(t, sent(t, providers.Request{Model: "m", Messages: in, Reasoning: "low"}).Body)
	if b.Thinking != nil {
		t.Errorf("got thinking %+v while continuing a tool loop, want none (signatures are not kept)", b.Thinking)
	}
	b = decode(t, sent(t, providers.Request{Model: "m", Messages: in[:1], Reasoning: "high"}).Body)
	if b.Thinking == nil || b.Thinking.BudgetTokens != 16384 || b.MaxTokens <= 16384 {
		t.Errorf("got thinking %+v max_tokens %d, want budget 16384 below max_tokens", b.Thinking, b.MaxTokens)
	}
	b = decode(t, sent(t, providers.Request{Model: "m", Messages: in[:1], Reasoning: "medium", MaxTokens: 1000}).Body)
	if b.Thinking == nil || b.Thinking.Type != "enabled" || b.Thinking.BudgetTokens != 4096 || b.MaxTokens <= 4096 {
		t.Errorf("got thinking %+v max_tokens %d, want enabled 4096 below max_tokens", b.Thinking, b.MaxTokens)
	}
	b = decode(t, sent(t, providers.Request{Model: "m", Messages: in[:1], Reasoning: "off", MaxTokens: 1000}).Body)
	if b.Thinking != nil || b.MaxTokens != 1000 {
		t.Errorf("got thinking %+v max_tokens %d, want none and 1000", b.Thinking, b.MaxTokens)
	}
}

func TestRequestTools(t *testing.T) {
	got := sent(t, providers.Request{
		Model:    "m",
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}},
		Tools: []messages.ToolSpec{
			{Name: "exec", Description: "Run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`)},
			{Name: "now", Description: "Current time"},
		},
	})
	if diff := cmp.Diff([]string{"exec", "now"}, got.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	b := decode(t, got.Body)
	if b.Tools[0].Description != "Run a command" || !strings.Contains(string(b.Tools[0].InputSchema), `"required":["cmd"]`) {
		t.Errorf("got tool %+v", b.Tools[0])
	}
	if string(b.Tools[1].InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("got schema %s for a tool without parameters, want an empty object schema", b.Tools[1].InputSchema)
	}
}

func TestRequestStartsWithUser(t *testing.T) {
	got := sent(t, providers.Request{Model: "m", Messages: []messages.ChatMessage{
		{Role: messages.RoleAssistant, Content: "Earlier answer.  "},
	}})
	b := decode(t, got.Body)
	if len(b.Messages) != 2 || b.Messages[0].Role != "user" {
		t.Fatalf("got %+v, want a user message first", b.Messages)
	}
	if txt := b.Messages[1].Content[0]["text"]; txt != "Earlier answer." {
		t.Errorf("got final assistant text %q, want trailing whitespace trimmed", txt)
	}
}

// TestSystemTailIsTheVolatileBlock: a prompt passed as a stable System and a SystemTail is
// sent as the same two blocks as the joined prompt with SystemStable.
func TestSystemTailIsTheVolatileBlock(t *testing.T) {
	stable := "You are reef. Tools: read_file, exec.\n"
	got := sent(t, providers.Request{
		Model: "claude-fake", System: stable, SystemStable: len(stable), SystemTail: "Today is Monday.",
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}},
	})
	b := decode(t, got.Body)
	if len(b.System) != 2 || b.System[0].Text != stable || b.System[0].CacheControl["type"] != "ephemeral" ||
		b.System[1].Text != "Today is Monday." || b.System[1].CacheControl != nil {
		t.Errorf("system blocks %+v, want the stable prefix cached and the tail after it", b.System)
	}
}
