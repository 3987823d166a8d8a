package openai

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"sync"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// chatRequest is the body of POST /chat/completions, but for "tools", which encode adds from
// its cache.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []wireMessage  `json:"messages"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"` // null for an assistant message with only tool calls
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireToolSpec `json:"function"`
}

type wireToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// systemEventPrefix marks transcript entries written by the gateway, sent as user messages
// because some servers reject system messages after the first.
const systemEventPrefix = "[System event — written by the gateway, not by the user]\n"

// buildRequest translates req, all but its tools, to the Chat Completions wire format.
func (c *Client) buildRequest(req providers.Request) chatRequest {
	body := chatRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
		Messages:      make([]wireMessage, 0, len(req.Messages)+1),
	}
	if req.System != "" {
		body.Messages = append(body.Messages, wireMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, toWire(m))
	}
	if req.MaxTokens > 0 {
		if c.official {
			body.MaxCompletionTokens = req.MaxTokens
		} else {
			body.MaxTokens = req.MaxTokens
		}
	}
	switch req.Reasoning {
	case "low", "medium", "high":
		body.ReasoningEffort = req.Reasoning
	}
	return body
}

func wireTools(specs []messages.ToolSpec) []wireTool {
	var tools []wireTool
	for _, t := range specs {
		tools = append(tools, wireTool{Type: "function", Function: wireToolSpec{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	return tools
}

// toolsCache keeps the encoded tools of the last request. Every request of an agent carries
// the same tool specs (the same slice), and encoding them (descriptions, JSON schemas
// compacted again) was the largest part of encoding a request. The cache is keyed by the
// slice, so it relies on what every caller does: a specs slice is never changed once used.
type toolsCache struct {
	mu   sync.Mutex
	key  *messages.ToolSpec // &specs[0]
	n    int
	json []byte
}

func (tc *toolsCache) encoded(specs []messages.ToolSpec) ([]byte, error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.key == &specs[0] && tc.n == len(specs) {
		return tc.json, nil
	}
	b, err := json.Marshal(wireTools(specs))
	if err != nil {
		return nil, err
	}
	tc.key, tc.n, tc.json = &specs[0], len(specs), b
	return b, nil
}

// encode encodes the request body, with the tools from the cache, into one buffer sized for
// the system prompt, the transcript and the tools (a request is mostly those).
func (c *Client) encode(req providers.Request) ([]byte, error) {
	var tools []byte
	if len(req.Tools) > 0 {
		var err error
		if tools, err = c.tools.encoded(req.Tools); err != nil {
			return nil, err
		}
	}
	size := len(req.System) + len(tools) + 1024
	for _, m := range req.Messages {
		size += len(m.Content) + 64
	}
	var buf bytes.Buffer
	buf.Grow(size)
	if err := json.NewEncoder(&buf).Encode(c.buildRequest(req)); err != nil {
		return nil, err
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")
	if len(tools) == 0 {
		return body, nil
	}
	// body ends with the object's '}': add the tools as its last member.
	body = append(body[:len(body)-1], `,"tools":`...)
	body = append(body, tools...)
	return append(body, '}'), nil
}

func toWire(m messages.ChatMessage) wireMessage {
	switch m.Role {
	case messages.RoleSystem:
		return wireMessage{Role: "user", Content: ptr(systemEventPrefix + m.Content)}
	case messages.RoleTool:
		return wireMessage{Role: "tool", Content: ptr(m.Content), ToolCallID: m.ToolCallID}
	case messages.RoleAssistant:
		w := wireMessage{Role: "assistant"}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			w.Content = ptr(m.Content)
		}
		for _, tc := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, wireToolCall{
				ID: tc.ID, Type: "function",
				Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		return w
	default:
		return wireMessage{Role: "user", Content: ptr(m.Content)}
	}
}

func ptr(s string) *string { return &s }

// isOfficial reports whether base points at api.openai.com, which wants max_completion_tokens.
func isOfficial(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// chunk is one streamed data event.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"` // DeepSeek, vLLM
			Reasoning        string `json:"reasoning"`         // OpenRouter, Ollama
			ToolCalls        []struct {
				Index    *int   `json:"index"` // missing at some servers
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *wireError `json:"error"`
}

// wireError is OpenAI's error object. Code is a string at OpenAI, a number at some servers.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func stopReason(finish string) providers.StopReason {
	switch finish {
	case "tool_calls", "function_call":
		return providers.StopToolUse
	case "length":
		return providers.StopMaxToken
	case "content_filter":
		return providers.StopFiltered
	default:
		return providers.StopEnd
	}
}
