package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

// sent plays one "ok" reply for req and returns what the fake recorded.
func sent(t *testing.T, req providers.Request) fake.Request {
	t.Helper()
	c, script, _ := setup(t, fake.Reply{Text: "ok"})
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
	Contents []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []map[string]any `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
		ThinkingConfig  *struct {
			ThinkingBudget  int  `json:"thinkingBudget"`
			IncludeThoughts bool `json:"includeThoughts"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

func decode(t *testing.T, raw []byte) body {
	t.Helper()
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	return b
}

func TestRequestTranscript(t *testing.T) {
	in := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "list files"},
		{Role: messages.RoleUser, Content: "and read todo"},
		{Role: messages.RoleAssistant, Content: "Sure.", ToolCalls: []messages.ToolCall{
			{ID: "x1", Name: "ls", Arguments: `{"dir":"."}`},
			{ID: "x2", Name: "read_file", Arguments: `{"path": broken`},
		}},
		{Role: messages.RoleTool, ToolCallID: "x1", ToolName: "ls", Content: "todo.md"},
		{Role: messages.RoleTool, ToolCallID: "x2", Content: "bad arguments", IsError: true},
		{Role: messages.RoleSystem, Content: "timer fired"},
	}
	got := sent(t, providers.Request{Model: "gemini-fake", System: "You are reef.", SystemStable: 5, Messages: in})
	want := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "list files\nand read todo"},
		{Role: messages.RoleAssistant, Content: "Sure.", ToolCalls: []messages.ToolCall{
			{ID: "call_1", Name: "ls", Arguments: `{"dir":"."}`},
			{ID: "call_2", Name: "read_file", Arguments: `{}`},
		}},
		{Role: messages.RoleTool, ToolCallID: "call_1", ToolName: "ls", Content: "todo.md"},
		{Role: messages.RoleTool, ToolCallID: "call_2", ToolName: "read_file", Content: "bad arguments", IsError: true},
		{Role: messages.RoleUser, Content: "[system event] timer fired"},
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got.System != "You are reef." {
		t.Errorf("got system %q", got.System)
	}
	b := decode(t, got.Body)
	var roles []string
	for _, c := range b.Contents {
		roles = append(roles, c.Role)
	}
	if diff := cmp.Diff([]string{"user", "model", "user"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if sig := b.Contents[1].Parts[1]["thoughtSignature"]; sig == nil {
		t.Errorf("got first functionCall part %v, want a thoughtSignature placeholder", b.Contents[1].Parts[1])
	}
	resp := b.Contents[2].Parts[1]["functionResponse"].(map[string]any)["response"]
	if diff := cmp.Diff(map[string]any{"error": "bad arguments"}, resp); diff != "" {
		t.Errorf("error result response (-want +got):\n%s", diff)
	}
	if b.GenerationConfig != nil {
		t.Errorf("got generationConfig %+v, want none by default", b.GenerationConfig)
	}
}

func TestRequestThinking(t *testing.T) {
	tests := []struct {
		reasoning string
		budget    int // 0: no thinkingConfig
	}{
		{"", 0}, {"off", 0}, {"low", 1024}, {"medium", 4096}, {"high", 16384},
	}
	for _, tt := range tests {
		t.Run(tt.reasoning, func(t *testing.T) {
			req := userReq("hi")
			req.Reasoning = tt.reasoning
			req.MaxTokens = 2000
			b := decode(t, sent(t, req).Body)
			if b.GenerationConfig == nil || b.GenerationConfig.MaxOutputTokens != 2000 {
				t.Fatalf("got generationConfig %+v, want maxOutputTokens 2000", b.GenerationConfig)
			}
			tc := b.GenerationConfig.ThinkingConfig
			switch {
			case tt.budget == 0 && tc != nil:
				t.Errorf("got thinkingConfig %+v, want none", tc)
			case tt.budget > 0 && (tc == nil || tc.ThinkingBudget != tt.budget || !tc.IncludeThoughts):
				t.Errorf("got thinkingConfig %+v, want budget %d with thoughts", tc, tt.budget)
			}
		})
	}
}

func TestRequestToolsCleaned(t *testing.T) {
	params := `{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"additionalProperties": false,
		"properties": {
			"cmd": {"type": "string", "description": "command", "default": "ls", "examples": ["ls"]},
			"timeout": {"type": ["integer", "null"], "minimum": 1}
		},
		"required": ["cmd", "gone"]
	}`
	got := sent(t, providers.Request{
		Model:    "gemini-fake",
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}},
		Tools: []messages.ToolSpec{
			{Name: "exec", Description: "Run a command", Parameters: json.RawMessage(params)},
			{Name: "now", Description: "Current time", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
	})
	if diff := cmp.Diff([]string{"exec", "now"}, got.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	decls := decode(t, got.Body).Tools[0].FunctionDeclarations
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"cmd":     map[string]any{"type": "string", "description": "command"},
			"timeout": map[string]any{"type": "integer", "nullable": true, "minimum": 1.0},
		},
		"required": []any{"cmd"},
	}
	if diff := cmp.Diff(want, decls[0].Parameters); diff != "" {
		t.Errorf("cleaned schema (-want +got):\n%s", diff)
	}
	if decls[1].Parameters != nil {
		t.Errorf("got parameters %v for a tool without properties, want none", decls[1].Parameters)
	}
}

func TestRequestStartsWithUser(t *testing.T) {
	b := decode(t, sent(t, providers.Request{Model: "m", Messages: []messages.ChatMessage{
		{Role: messages.RoleAssistant, Content: "Earlier answer."},
		{Role: messages.RoleUser, Content: "go on"},
	}}).Body)
	if len(b.Contents) != 3 || b.Contents[0].Role != "user" || b.Contents[1].Role != "model" {
		t.Errorf("got %+v, want user, model, user", b.Contents)
	}
}

// TestSystemTailFollowsSystem: the system instruction is System followed by SystemTail.
func TestSystemTailFollowsSystem(t *testing.T) {
	got := sent(t, providers.Request{Model: "gemini-fake", System: "You are reef.\n", SystemStable: 14,
		SystemTail: "Today is Monday.", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}}})
	if got.System != "You are reef.\nToday is Monday." {
		t.Errorf("got system %q, want System then SystemTail", got.System)
	}
}
