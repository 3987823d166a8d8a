package openaiapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/reefgw/reef/messages"
)

// The OpenAI Chat Completions wire format, as much of it as reef reads and writes.

// chatRequest is a POST /v1/chat/completions body. Fields reef does not use (temperature,
// stop, tools, ...) are accepted and ignored: the agent's own settings apply (options.go).
type chatRequest struct {
	requestOptions
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	User     string        `json:"user"`
	// Tools are the client's own tools (tools.go).
	Tools             []functionTool  `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	// StreamOptions.IncludeUsage asks for the usage chunk (choices: []) before [DONE]; a
	// client that did not ask may read choices[0] of every chunk.
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatMessage is one message of a request. Content is a string or an array of parts.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// toolCall is a call an assistant message of the request made.
type toolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// text returns the message's text: the string, or its text parts joined by newlines.
func (m chatMessage) text() (string, error) {
	text, _, err := m.content()
	return text, err
}

// content returns the message's text and the URLs of its image_url parts.
func (m chatMessage) content() (string, []string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil, nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", nil, errors.New("content must be a string or an array of content parts")
	}
	var texts, images []string
	for _, p := range parts {
		switch {
		case p.Type == "text":
			texts = append(texts, p.Text)
		case p.Type == "image_url" && p.ImageURL != nil:
			images = append(images, p.ImageURL.URL)
		case p.Type == "image_url":
			return "", nil, errors.New("an image_url part without image_url.url")
		}
	}
	return strings.Join(texts, "\n"), images, nil
}

type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
}

type choice struct {
	Index        int       `json:"index"`
	Message      *answer   `json:"message,omitempty"`
	Delta        *answer   `json:"delta,omitempty"`
	FinishReason *string   `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs"`
}

type answer struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []wireCall `json:"tool_calls,omitempty"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(u messages.Usage) *usage {
	in := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return &usage{PromptTokens: in, CompletionTokens: u.OutputTokens, TotalTokens: in + u.OutputTokens}
}

type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	Name    string `json:"name,omitempty"`
}

// apiError is OpenAI's error body: {"error": {...}}.
type apiError struct {
	status  int
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

func newError(status int, typ, code, msg string) *apiError {
	e := &apiError{status: status, Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	return e
}

func badRequest(code, msg string) *apiError {
	return newError(http.StatusBadRequest, "invalid_request_error", code, msg)
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]*apiError{"error": e})
}

func ptr[T any](v T) *T { return &v }
