package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

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

// body is an encoded request in segments: the stable prefix of the system prompt and the
// tools are the same bytes for every request of an agent and are shared, not copied, so a
// request waiting for its answer holds only what is its own (net/http keeps a request's body
// until the response ends, to send it again on a dead kept-alive connection).
type body [][]byte

func (b body) len() int64 {
	n := 0
	for _, seg := range b {
		n += len(seg)
	}
	return int64(n)
}

// reader returns a fresh reader over the whole body.
func (b body) reader() io.Reader { return &bodyReader{segs: b} }

// bodyReader reads a body's segments in turn. Its WriteTo hands each segment to the writer as
// it is, with no copy buffer (io.Copy prefers it); net/http, though, copies a body of known
// length through an io.LimitReader, which hides WriteTo, so Read matters as much.
type bodyReader struct {
	segs [][]byte
	off  int // into segs[0]
}

// Read fills p from as many segments as fit: net/http copies a body of known length through
// a buffer, one write to the connection per Read, and each write is a TCP segment of its own.
func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		c := copy(p[n:], r.segs[0][r.off:])
		n += c
		if r.off += c; r.off == len(r.segs[0]) {
			r.segs, r.off = r.segs[1:], 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for ; len(r.segs) > 0; r.segs, r.off = r.segs[1:], 0 {
		n, err := w.Write(r.segs[0][r.off:])
		total += int64(n)
		if err != nil {
			r.off += n
			return total, err
		}
	}
	return total, nil
}

// systemOpen is how the encoded body opens the system message's content. JSON escapes every
// quote inside a string, so the first occurrence is the system message itself: it is the
// first message, and only the model's name comes before it.
var systemOpen = []byte(`{"role":"system","content":"`)

// encode encodes the request body. The system message is encoded with only the volatile part
// of the prompt; the stable prefix, escaped once and cached, is spliced in front of it.
func (c *Client) encode(req providers.Request) (body, error) {
	var tools []byte
	if len(req.Tools) > 0 {
		var err error
		if tools, err = c.tools.encoded(req.Tools); err != nil {
			return nil, err
		}
	}
	stable := stableCut(req.System, req.SystemStable)
	var prefix []byte
	if stable > 0 {
		var err error
		if prefix, err = c.prefixes.escaped(req.System[:stable]); err != nil {
			return nil, err
		}
		req.System = req.System[stable:]
	}
	req.System += req.SystemTail
	size := len(req.System) + 1024
	for _, m := range req.Messages {
		size += len(m.Content) + 64
	}
	var buf bytes.Buffer
	buf.Grow(size)
	enc := json.NewEncoder(&buf)
	wire := c.buildRequest(req)
	if stable > 0 && req.System == "" { // the whole prompt is stable: keep its message
		wire.Messages = append([]wireMessage{{Role: "system", Content: ptr("")}}, wire.Messages...)
	}
	if err := enc.Encode(wire); err != nil {
		return nil, err
	}
	rest := bytes.TrimRight(buf.Bytes(), "\n")
	var out body
	if prefix != nil {
		i := bytes.Index(rest, systemOpen)
		if i < 0 {
			return nil, errors.New("encode: no system message to put the prompt in")
		}
		i += len(systemOpen)
		out = append(out, rest[:i:i], prefix)
		rest = rest[i:]
	}
	if len(tools) == 0 {
		return append(out, rest), nil
	}
	// rest ends with the object's '}': add the tools as its last member.
	rest = append(rest[:len(rest)-1], `,"tools":`...)
	return append(out, rest, tools, closeBrace), nil
}

var closeBrace = []byte("}")

// stableCut returns where the stable prefix of system ends: at most len(system), never inside
// a rune (each side is escaped on its own).
func stableCut(system string, stable int) int {
	stable = min(stable, len(system))
	for stable > 0 && stable < len(system) && !utf8.RuneStart(system[stable]) {
		stable++
	}
	return max(stable, 0)
}

// prefixCache keeps the escaped stable prefixes of system prompts: one per agent and kind of
// chat, so a handful.
type prefixCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

const maxPrefixes = 16

func (pc *prefixCache) escaped(prefix string) ([]byte, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if b, ok := pc.m[prefix]; ok {
		return b, nil
	}
	q, err := json.Marshal(prefix)
	if err != nil {
		return nil, err
	}
	if pc.m == nil || len(pc.m) >= maxPrefixes {
		pc.m = map[string][]byte{}
	}
	b := q[1 : len(q)-1 : len(q)-1]
	pc.m[prefix] = b
	return b, nil
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
