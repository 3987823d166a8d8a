package openaiapi

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/reefgw/reef/messages"
)

// Client tools: a request's tools are offered to the agent's model beside the agent's own
// (messages.ClientTools). A run whose model calls one ends with the call: the answer's
// finish_reason is "tool_calls". The client runs it and sends its result as a tool message
// in its next request, which continues the run: in a durable session the session holds the
// call, in a stateless request the messages do.

// functionTool is a Chat Completions tool: {"type": "function", "function": {...}}.
type functionTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// toolRequest is the part of a request about client tools; Responses API tools are flat
// ({"type": "function", "name": ...}), converted to specs before.
type toolRequest struct {
	specs    []messages.ToolSpec
	choice   json.RawMessage
	parallel *bool
	param    string // the request's field of the tools: "tools"
}

// toolName is what OpenAI allows as a function's name.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// clientTools checks a request's tools against the agent's (a name the agent's own tool has is
// refused: the model could not tell them apart) and reads tool_choice and
// parallel_tool_calls. nil when the request declares no tools.
func (h *Handler) clientTools(a Agent, tr toolRequest) (*messages.ClientTools, *apiError) {
	choice, err := toolChoice(tr.choice)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, s := range tr.specs {
		param := fmt.Sprintf("%s[%d]", tr.param, i)
		switch {
		case !toolName.MatchString(s.Name):
			return nil, paramError("invalid_tool", param, fmt.Sprintf("%s: a function's name is 1 to 64 letters, digits, _ and -; got %q", param, s.Name))
		case seen[s.Name]:
			return nil, paramError("duplicate_tool", param, fmt.Sprintf("%s: the tool %q is declared twice", param, s.Name))
		case h.cfg.HasTool != nil && h.cfg.HasTool(a.ID, s.Name):
			return nil, paramError("tool_name_conflict", param, fmt.Sprintf(
				"%s: reef/%s has a tool of its own named %q; give the client's tool another name", param, a.ID, s.Name))
		}
		if len(s.Parameters) > 0 && string(s.Parameters) != "null" && !json.Valid(s.Parameters) {
			return nil, paramError("invalid_tool", param, param+": parameters is not a JSON schema object")
		}
		seen[s.Name] = true
	}
	switch {
	case len(tr.specs) == 0 && (choice == "" || choice == "auto" || choice == "none"):
		return nil, nil
	case len(tr.specs) == 0:
		return nil, paramError("invalid_tool_choice", "tool_choice", "tool_choice asks for a tool call, but the request declares no tools")
	case choice != "" && choice != "auto" && choice != "none" && choice != "required" && !seen[choice]:
		return nil, paramError("invalid_tool_choice", "tool_choice", fmt.Sprintf("tool_choice names %q, which is not among the request's tools", choice))
	}
	specs := make([]messages.ToolSpec, len(tr.specs))
	copy(specs, tr.specs)
	return &messages.ClientTools{Specs: specs, Choice: choice, Serial: tr.parallel != nil && !*tr.parallel}, nil
}

// toolChoice reads tool_choice: "auto", "none", "required", or a named function, as Chat
// Completions ({"type": "function", "function": {"name": ...}}) or the Responses API
// ({"type": "function", "name": ...}) spell it. Named, it returns the name.
func toolChoice(raw json.RawMessage) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return "", paramError("invalid_tool_choice", "tool_choice", fmt.Sprintf("tool_choice %q: one of auto, none, required, or a function", s))
	}
	var o struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &o) != nil || o.Type != "function" || o.Name == "" && o.Function.Name == "" {
		return "", paramError("invalid_tool_choice", "tool_choice", `tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": ...}}`)
	}
	if o.Name != "" {
		return o.Name, nil
	}
	return o.Function.Name, nil
}

// chatSpecs are a Chat Completions request's tools as specs.
func chatSpecs(tools []functionTool) ([]messages.ToolSpec, *apiError) {
	out := make([]messages.ToolSpec, 0, len(tools))
	for i, t := range tools {
		if t.Type != "function" {
			return nil, paramError("unsupported_tool", fmt.Sprintf("tools[%d]", i),
				fmt.Sprintf("tools[%d] is of type %q; reef offers the model function tools only", i, t.Type))
		}
		out = append(out, messages.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out, nil
}

// wireCall is a tool call in an answer; Index is set in a stream's deltas.
type wireCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// wireCalls are the client calls a run ended with, as an answer's tool_calls.
func wireCalls(calls []messages.ToolCall, indexed bool) []wireCall {
	out := make([]wireCall, len(calls))
	for i, c := range calls {
		args := c.Arguments
		if args == "" {
			args = "{}"
		}
		out[i] = wireCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: args}}
		if indexed {
			out[i].Index = ptr(i)
		}
	}
	return out
}

func paramError(code, param, msg string) *apiError {
	e := badRequest(code, msg)
	e.Param = &param
	return e
}
