package openaiapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/reefgw/reef/messages"
)

// The Responses API (POST /v1/responses), which newer SDKs and agents default to. A request is
// turned into the Chat Completions one's messages and runs the same way; its answer is a
// response object, or its stream of events.
//
// Sessions: a request with "store": false is stateless (its input is the conversation). Any
// other runs in a durable session: the one previous_response_id names, else the one the
// X-Reef-Session header or the user field names, else a new one. A response's id carries its
// session's name (resp_<hex name>_<random>), so previous_response_id continues it; the input
// is then only what is new (a user message, or function_call_output items).

// responseRequest is a POST /v1/responses body, as much of it as reef reads.
type responseRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	PreviousResponseID string          `json:"previous_response_id"`
	Store              *bool           `json:"store"`
	Stream             bool            `json:"stream"`
	User               string          `json:"user"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Tools              []responseTool  `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	ParallelToolCalls  *bool           `json:"parallel_tool_calls"`
	Text               *struct {
		Format json.RawMessage `json:"format"`
	} `json:"text"`
}

// responseTool is a Responses API tool: function tools are flat.
type responseTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// inputItem is one item of a request's input: a message ({role, content}), a function_call
// the model made, or a function_call_output the client sends back.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// responseSession reads the session a response id names (responseID).
func responseSession(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, "resp_")
	i := strings.LastIndexByte(rest, '_')
	if !ok || i < 0 {
		return "", false
	}
	name, err := hex.DecodeString(rest[:i])
	if err != nil || !sessionName.MatchString(string(name)) {
		return "", false
	}
	return string(name), true
}

// responseID is the id of a response of session (random: the request's own id).
func responseID(session, random string) string {
	if session == "" {
		return "resp_" + random
	}
	return "resp_" + hex.EncodeToString([]byte(session)) + "_" + random
}

// parseResponses checks a Responses API request; nothing is stored for one it refuses.
func (h *Handler) parseResponses(w http.ResponseWriter, r *http.Request) (*ask, *apiError) {
	var req responseRequest
	if err := h.decode(w, r, &req); err != nil {
		return nil, err
	}
	a, aerr := h.agent(req.Model, caller(r))
	if aerr != nil {
		return nil, aerr
	}
	var format json.RawMessage
	if req.Text != nil {
		format = req.Text.Format
	}
	maxTokens, oerr := requestOptions{MaxTokens: req.MaxOutputTokens, ResponseFormat: format}.outputCap()
	if oerr != nil {
		return nil, oerr
	}
	msgs, err := inputMessages(req.Input, req.Instructions)
	if err != nil {
		return nil, err
	}
	name, err := h.responseSessionOf(a, r, req)
	if err != nil {
		return nil, err
	}
	q := &ask{agent: a, session: name, stateless: name == "", stream: req.Stream, model: req.Model, maxTokens: maxTokens, guest: caller(r) != nil}
	specs := make([]messages.ToolSpec, 0, len(req.Tools))
	for i, t := range req.Tools {
		if t.Type != "function" {
			return nil, paramError("unsupported_tool", fmt.Sprintf("tools[%d]", i),
				fmt.Sprintf("tools[%d] is of type %q; reef offers the model function tools only", i, t.Type))
		}
		specs = append(specs, messages.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return h.build(q, msgs, toolRequest{specs: specs, choice: req.ToolChoice, parallel: req.ParallelToolCalls, param: "tools"})
}

// responseSessionOf is the session a Responses API request runs in: "" (stateless) with
// store false; the one previous_response_id names; the header's or user's; or a new one.
func (h *Handler) responseSessionOf(a Agent, r *http.Request, req responseRequest) (string, *apiError) {
	stateless := req.Store != nil && !*req.Store
	switch {
	case stateless && req.PreviousResponseID != "":
		return "", paramError("invalid_previous_response", "previous_response_id",
			"previous_response_id continues a stored conversation; a request with store: false carries its whole conversation in input")
	case stateless:
		return "", nil
	case req.PreviousResponseID != "":
		name, ok := responseSession(req.PreviousResponseID)
		if !ok || !strings.HasPrefix(name, caller(r).prefix()) { // another key's: not found (keys.go)
			return "", newError(http.StatusNotFound, "invalid_request_error", "previous_response_not_found",
				fmt.Sprintf("previous response %q not found", req.PreviousResponseID))
		}
		return name, nil
	}
	name, err := h.session(a, caller(r), r.Header.Get(SessionHeader), req.User)
	if err != nil || name != "" {
		return name, err
	}
	return caller(r).prefix() + "r-" + strings.ToLower(rand.Text()[:16]), nil
}

// inputMessages are a request's input as Chat Completions messages: a string is one user
// message; items are messages, the model's function calls (on the assistant message before,
// or one of their own) and the client's function_call_output results (tool messages).
// instructions come first, as a system message.
func inputMessages(raw json.RawMessage, instructions string) ([]chatMessage, *apiError) {
	var out []chatMessage
	if instructions != "" {
		b, _ := json.Marshal(instructions)
		out = append(out, chatMessage{Role: "system", Content: b})
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		b, _ := json.Marshal(s)
		return append(out, chatMessage{Role: "user", Content: b}), nil
	}
	var items []inputItem
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, paramError("missing_input", "input", "input is required: a string, or an array of input items")
	}
	for i, it := range items {
		switch it.Type {
		case "", "message":
			content, err := inputContent(it.Content)
			if err != nil {
				return nil, paramError("invalid_content", fmt.Sprintf("input[%d]", i), fmt.Sprintf("input[%d]: %v", i, err))
			}
			out = append(out, chatMessage{Role: it.Role, Content: content})
		case "function_call":
			call := toolCall{ID: it.CallID}
			call.Function.Name, call.Function.Arguments = it.Name, it.Arguments
			if n := len(out); n > 0 && out[n-1].Role == "assistant" {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
			} else {
				out = append(out, chatMessage{Role: "assistant", ToolCalls: []toolCall{call}})
			}
		case "function_call_output":
			output := it.Output
			var text string
			if json.Unmarshal(it.Output, &text) == nil {
				output, _ = json.Marshal(text)
			}
			out = append(out, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: output})
		default:
			return nil, paramError("unsupported_input", fmt.Sprintf("input[%d]", i),
				fmt.Sprintf("input[%d] is of type %q; reef reads message, function_call and function_call_output items", i, it.Type))
		}
	}
	return out, nil
}

// inputContent is a message item's content as Chat Completions content: a string as it is,
// input_text and output_text parts as text parts, input_image parts as image_url parts.
func inputContent(raw json.RawMessage) (json.RawMessage, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return raw, nil
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, errors.New("content must be a string or an array of content parts")
	}
	out := make([]map[string]any, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, map[string]any{"type": "text", "text": p.Text})
		case "input_image":
			var url string
			if json.Unmarshal(p.ImageURL, &url) != nil || url == "" {
				return nil, errors.New("an input_image part without image_url")
			}
			out = append(out, map[string]any{"type": "image_url", "image_url": map[string]string{"url": url}})
		default:
			return nil, fmt.Errorf("a content part of type %q; reef reads input_text and input_image", p.Type)
		}
	}
	return json.Marshal(out)
}
