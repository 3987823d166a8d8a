package openai

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/imagefit"
	"github.com/reefgw/reef/providers/internal/reqbody"
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
	Content    any            `json:"content"` // *string, null for an assistant message with only tool calls, or []wirePart
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// wirePart is one part of a user message with images: {"type":"text","text":...} or
// {"type":"image_url","image_url":{"url":"data:image/png;base64,..."}}.
type wirePart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

// userContent is a user message's content: its text, or parts when it carries images.
func userContent(m messages.ChatMessage) any {
	var parts []wirePart
	for _, md := range m.Media {
		if md.Kind == messages.MediaImage && len(md.Data) > 0 {
			parts = append(parts, wirePart{Type: "image_url", ImageURL: &imageURL{
				URL: "data:" + md.MIME + ";base64," + base64.StdEncoding.EncodeToString(md.Data)}})
		}
	}
	if len(parts) == 0 {
		return ptr(m.Content)
	}
	return append([]wirePart{{Type: "text", Text: m.Content}}, parts...)
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

// wireTools translates the tool specs. A schema that is not JSON becomes an empty object
// schema, as in the other clients: it would fail every request of the agent otherwise.
func wireTools(specs []messages.ToolSpec) []wireTool {
	var tools []wireTool
	for _, t := range specs {
		params := t.Parameters
		if len(params) > 0 && !json.Valid(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		tools = append(tools, wireTool{Type: "function", Function: wireToolSpec{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return tools
}

// systemOpen is how the encoded body opens the system message's content. JSON escapes every
// quote inside a string, so the first occurrence is the system message itself: it is the
// first message, and only the model's name comes before it.
var systemOpen = []byte(`{"role":"system","content":"`)

// encode encodes the request body. The system message is encoded with only the volatile part
// of the prompt; the stable prefix, escaped once and cached, is spliced in after systemOpen,
// and the tools, encoded once, are added at the end.
func (c *Client) encode(req providers.Request) (reqbody.Body, error) {
	req.Messages = imagefit.Messages(req.Messages, imagefit.OpenAI) // the provider's real limits (#33.7)
	tools, err := c.tools.Encoded(req.Tools, encodeTools)
	if err != nil {
		return nil, err
	}
	stable := reqbody.StableCut(req.System, req.SystemStable)
	var prefix, after []byte
	if stable > 0 {
		if prefix, err = c.prefixes.Escaped(req.System[:stable]); err != nil {
			return nil, err
		}
		req.System, after = req.System[stable:], systemOpen
	}
	req.System += req.SystemTail
	size := len(req.System) + 1024
	for _, m := range req.Messages {
		size += len(m.Content) + 64
		for _, md := range m.Media {
			size += len(md.Data) * 4 / 3
		}
	}
	wire := c.buildRequest(req)
	if stable > 0 && req.System == "" { // the whole prompt is stable: keep its message
		wire.Messages = append([]wireMessage{{Role: "system", Content: ptr("")}}, wire.Messages...)
	}
	return reqbody.Encode(wire, size, after, prefix, tools)
}

func encodeTools(specs []messages.ToolSpec) ([]byte, error) { return json.Marshal(wireTools(specs)) }

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
		return wireMessage{Role: "user", Content: userContent(m)}
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
