package anthropic

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/imagefit"
	"github.com/reefgw/reef/providers/internal/reqbody"
)

// wireRequest is the body of POST /v1/messages.
type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	System    []systemBlock `json:"system,omitempty"`
	Messages  []wireMessage `json:"messages"`
	Tools     []wireTool    `json:"tools,omitempty"`
	Thinking  *thinking     `json:"thinking,omitempty"`
	Output    *outputConfig `json:"output_config,omitempty"`
	Stream    bool          `json:"stream"`
}

// outputConfig carries the effort of adaptive thinking: {"effort": "low"|"medium"|"high"}.
type outputConfig struct {
	Effort string `json:"effort,omitempty"`
}

type wireMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content []block `json:"content"`
}

// block is one content block; the fields used depend on Type (text, tool_use, tool_result).
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      string          `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Source       *imageSource    `json:"source,omitempty"` // Type "image"
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// imageSource is an image block's data: {"type":"base64","media_type":"image/png","data":...}.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoding/json writes []byte as base64
}

// imageBlocks are the images of a user message that carry their bytes (a vision model).
func imageBlocks(m messages.ChatMessage) []block {
	var out []block
	for _, md := range m.Media {
		if md.Kind == messages.MediaImage && len(md.Data) > 0 {
			out = append(out, block{Type: "image", Source: &imageSource{Type: "base64", MediaType: md.MIME, Data: md.Data}})
		}
	}
	return out
}

type cacheControl struct {
	Type string `json:"type"`
}

// systemBlock is a text block of the system prompt. Its text is encoded even when empty:
// encode leaves the stable block's text out, to splice in its cached escaped bytes.
type systemBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// thinking is {"type":"enabled","budget_tokens":N} (extended thinking with a budget) or
// {"type":"adaptive"} (the model decides how much to think, by output_config.effort).
type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// thinkingBudget maps providers.Request.Reasoning to a budget; 0 means thinking off.
var thinkingBudget = map[string]int{"low": 1024, "medium": 4096, "high": 16384}

// SystemEventPrefix marks a RoleSystem transcript entry, sent as user text.
const SystemEventPrefix = "[system event] "

const emptySchema = `{"type":"object","properties":{}}`

// buildRequest translates a providers.Request to the wire format.
func (c *Client) buildRequest(req providers.Request) wireRequest {
	stable := reqbody.StableCut(req.System, req.SystemStable)
	w := wireRequest{
		Model:     req.Model,
		MaxTokens: req.MaxTokens,
		System:    systemBlocks(req.System[:stable], req.System[stable:]+req.SystemTail),
		Messages:  convertMessages(req.Messages),
		Tools:     wireTools(req.Tools),
		Stream:    true,
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens = c.maxToks
	}
	// Thinking needs the signed thinking blocks of the current tool loop sent back, and reef
	// does not keep signatures; so thinking is left off while continuing a tool loop.
	budget := thinkingBudget[req.Reasoning]
	switch {
	case budget == 0 || continuesToolLoop(w.Messages):
	case c.adaptive(req.Model):
		w.Thinking, w.Output = &thinking{Type: "adaptive"}, &outputConfig{Effort: req.Reasoning}
	default:
		w.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
		if w.MaxTokens <= budget {
			w.MaxTokens = budget + c.maxToks
		}
	}
	return w
}

// systemBlocks makes the system prompt a cached block for its stable part and a block for the
// rest. Blank blocks are left out (the API refuses them).
func systemBlocks(stable, rest string) []systemBlock {
	var out []systemBlock
	if strings.TrimSpace(stable) != "" {
		out = append(out, systemBlock{Type: "text", Text: stable, CacheControl: &cacheControl{Type: "ephemeral"}})
	}
	if strings.TrimSpace(rest) != "" {
		out = append(out, systemBlock{Type: "text", Text: rest})
	}
	return out
}

func wireTools(specs []messages.ToolSpec) []wireTool {
	var tools []wireTool
	for _, t := range specs {
		schema := t.Parameters
		if len(schema) == 0 || !json.Valid(schema) {
			schema = json.RawMessage(emptySchema)
		}
		tools = append(tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return tools
}

func encodeTools(specs []messages.ToolSpec) ([]byte, error) { return json.Marshal(wireTools(specs)) }

// stableOpen is how the encoded body opens the stable block's text: the system blocks come
// right after the model's name and max_tokens, and JSON escapes every quote inside a string,
// so its first occurrence is the first system block's.
var stableOpen = []byte(`{"type":"text","text":"`)

// encode encodes the request body: buildRequest's, with the stable part of the system prompt
// (escaped once and cached) and the tools (encoded once) shared by every request's body
// instead of encoded into each. On a first turn they are most of the body.
func (c *Client) encode(req providers.Request) (reqbody.Body, error) {
	req.Messages = imagefit.Messages(req.Messages, imagefit.Anthropic) // the provider's real limits (#33.7)
	tools, err := c.tools.Encoded(req.Tools, encodeTools)
	if err != nil {
		return nil, err
	}
	req.Tools = nil
	w := c.buildRequest(req)
	var prefix, after []byte
	if len(w.System) > 0 && w.System[0].CacheControl != nil {
		if prefix, err = c.prefixes.Escaped(w.System[0].Text); err != nil {
			return nil, err
		}
		w.System[0].Text, after = "", stableOpen
	}
	size := 1024
	for _, b := range w.System {
		size += len(b.Text)
	}
	for _, m := range req.Messages {
		size += len(m.Content) + 64
		for _, md := range m.Media {
			size += len(md.Data) * 4 / 3
		}
	}
	return reqbody.Encode(w, size, after, prefix, tools)
}

// convertMessages builds the alternating user/assistant list the API requires: consecutive
// same-role entries are merged, tool results become tool_result blocks in a user message,
// transcript system events become marked user text.
func convertMessages(in []messages.ChatMessage) []wireMessage {
	var out []wireMessage
	add := func(role string, blocks ...block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	for i, m := range in {
		switch m.Role {
		case messages.RoleUser:
			add("user", append(imageBlocks(m), textBlocks(m.Content)...)...)
		case messages.RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				add("user", block{Type: "text", Text: SystemEventPrefix + m.Content})
			}
		case messages.RoleAssistant:
			blocks := textBlocks(m.Content)
			for j, tc := range m.ToolCalls {
				blocks = append(blocks, block{
					Type:  "tool_use",
					ID:    toolID(tc.ID, i, j),
					Name:  tc.Name,
					Input: toolInput(tc.Arguments),
				})
			}
			add("assistant", blocks...)
		case messages.RoleTool:
			add("user", block{
				Type:      "tool_result",
				ToolUseID: toolID(m.ToolCallID, -1, 0),
				Content:   m.Content,
				IsError:   m.IsError,
			})
		}
	}
	for i := range out {
		if out[i].Role == "user" {
			resultsFirst(out[i].Content)
		}
	}
	if len(out) > 0 && out[0].Role == "assistant" {
		out = append([]wireMessage{{Role: "user", Content: []block{{Type: "text", Text: "(conversation continues)"}}}}, out...)
	}
	if n := len(out); n > 0 && out[n-1].Role == "assistant" {
		// A final assistant message is a prefill; the API refuses trailing whitespace there.
		last := &out[n-1].Content[len(out[n-1].Content)-1]
		if last.Type == "text" {
			last.Text = strings.TrimRight(last.Text, " \t\r\n")
		}
	}
	return out
}

func textBlocks(s string) []block {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []block{{Type: "text", Text: s}}
}

// resultsFirst moves tool_result blocks before any text in a user message, as the API requires.
func resultsFirst(bs []block) {
	sorted := make([]block, 0, len(bs))
	for _, b := range bs {
		if b.Type == "tool_result" {
			sorted = append(sorted, b)
		}
	}
	for _, b := range bs {
		if b.Type != "tool_result" {
			sorted = append(sorted, b)
		}
	}
	copy(bs, sorted)
}

// continuesToolLoop reports whether the request answers tool calls (ends in tool results).
func continuesToolLoop(ms []wireMessage) bool {
	if len(ms) == 0 {
		return false
	}
	last := ms[len(ms)-1]
	return last.Role == "user" && len(last.Content) > 0 && last.Content[0].Type == "tool_result"
}

// toolInput parses stored arguments; the API needs an object, so anything else becomes {}.
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	var obj map[string]json.RawMessage
	if !strings.HasPrefix(trimmed, "{") || json.Unmarshal([]byte(trimmed), &obj) != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(trimmed)
}

// toolID makes an id match the API's pattern ^[a-zA-Z0-9_-]+$ (ids from other providers may
// not), deterministically so a tool_use and its tool_result still agree.
func toolID(id string, msg, call int) string {
	if id == "" {
		return "toolu_reef_" + strconv.Itoa(msg) + "_" + strconv.Itoa(call)
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, id)
}
