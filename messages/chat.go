package messages

import (
	"encoding/json"
	"time"
)

// Role says who wrote a ChatMessage.
type Role string

const (
	RoleSystem    Role = "system"    // system-authored event inside the transcript (not the system prompt)
	RoleUser      Role = "user"      // a person, through a channel
	RoleAssistant Role = "assistant" // the model
	RoleTool      Role = "tool"      // the result of one tool call
)

// ChatMessage is one transcript entry and one message of an LLM request.
type ChatMessage struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// Reasoning is the model's visible reasoning text, kept for the record; never sent back.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID and ToolName identify the call a RoleTool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool      `json:"isError,omitempty"`
	Time    time.Time `json:"time,omitzero"`
	// Media are the files of a user message (media.go): images go to a vision model as
	// image input (their Data filled for the request), the rest is described in Content.
	Media []Media `json:"media,omitempty"`
}

// ToolCall is one call the model asked for. Arguments is the raw JSON text the model produced,
// which may be malformed: tools validate it.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool to the model. Parameters is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Usage counts the tokens of one LLM call.
type Usage struct {
	InputTokens      int `json:"inputTokens,omitempty"`
	OutputTokens     int `json:"outputTokens,omitempty"`
	CacheReadTokens  int `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int `json:"cacheWriteTokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
	}
}
