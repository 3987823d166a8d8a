package gemini

import (
	"encoding/json"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/imagefit"
	"github.com/reefgw/reef/providers/internal/reqbody"
)

// wireRequest is the body of streamGenerateContent.
type wireRequest struct {
	Contents          []content          `json:"contents"`
	SystemInstruction *systemInstruction `json:"systemInstruction,omitempty"`
	Tools             []wireTool         `json:"tools,omitempty"`
	GenerationConfig  *genConfig         `json:"generationConfig,omitempty"`
}

// systemInstruction is the system prompt, one text part. Its text is encoded even when empty:
// encode leaves the prompt's stable prefix out of it, to splice in its cached escaped bytes.
type systemInstruction struct {
	Parts []systemPart `json:"parts"`
}

type systemPart struct {
	Text string `json:"text"`
}

type content struct {
	Role  string `json:"role,omitempty"` // "user" or "model"
	Parts []part `json:"parts"`
}

// part is one content part; exactly one of Text, FunctionCall, FunctionResponse is set.
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	InlineData       *inlineData       `json:"inlineData,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

// inlineData is an image part: {"mimeType":"image/png","data":<base64>}.
type inlineData struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"` // encoding/json writes []byte as base64
}

// imageParts are the images of a user message that carry their bytes (a vision model).
func imageParts(m messages.ChatMessage) []part {
	var out []part
	for _, md := range m.Media {
		if md.Kind == messages.MediaImage && len(md.Data) > 0 {
			out = append(out, part{InlineData: &inlineData{MimeType: md.MIME, Data: md.Data}})
		}
	}
	return out
}

type functionCall struct {
	ID   string          `json:"id,omitempty"` // read from answers; not sent
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	Name     string            `json:"name"`
	Response map[string]string `json:"response"`
}

type wireTool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type genConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	ThinkingBudget  int  `json:"thinkingBudget"`
	IncludeThoughts bool `json:"includeThoughts"`
}

// thinkingBudget maps providers.Request.Reasoning to a budget; absent means the model default.
var thinkingBudget = map[string]int{"low": 1024, "medium": 4096, "high": 16384}

// SystemEventPrefix marks a RoleSystem transcript entry, sent as user text.
const SystemEventPrefix = "[system event] "

// skipSignature is Google's documented placeholder for a functionCall replayed without the
// thoughtSignature it came with (reef does not keep signatures). Gemini 3 models refuse
// replayed calls without one; earlier models ignore it.
const skipSignature = "skip_thought_signature_validator"

// buildRequest translates a providers.Request to the wire format.
func buildRequest(req providers.Request) wireRequest {
	w := wireRequest{Contents: convertMessages(req.Messages)}
	if system := req.System + req.SystemTail; strings.TrimSpace(system) != "" {
		w.SystemInstruction = &systemInstruction{Parts: []systemPart{{Text: system}}}
	}
	w.Tools = wireTools(req.Tools)
	gc := genConfig{MaxOutputTokens: req.MaxTokens}
	if budget, ok := thinkingBudget[req.Reasoning]; ok {
		gc.ThinkingConfig = &thinkingConfig{ThinkingBudget: budget, IncludeThoughts: true}
	}
	if gc != (genConfig{}) {
		w.GenerationConfig = &gc
	}
	return w
}

func wireTools(specs []messages.ToolSpec) []wireTool {
	if len(specs) == 0 {
		return nil
	}
	var decls []functionDeclaration
	for _, t := range specs {
		decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, Parameters: CleanSchema(t.Parameters)})
	}
	return []wireTool{{FunctionDeclarations: decls}}
}

func encodeTools(specs []messages.ToolSpec) ([]byte, error) { return json.Marshal(wireTools(specs)) }

// systemOpen is how the encoded body opens the system prompt's text: a key, and keys are not
// text anyone else writes.
var systemOpen = []byte(`"systemInstruction":{"parts":[{"text":"`)

// encode encodes the request body: buildRequest's, with the stable prefix of the system
// prompt (escaped once and cached) and the tools (their schemas cleaned and encoded once)
// shared by every request's body instead of encoded into each.
func (c *Client) encode(req providers.Request) (reqbody.Body, error) {
	req.Messages = imagefit.Messages(req.Messages, imagefit.Gemini) // the provider's real limits (#33.7)
	tools, err := c.tools.Encoded(req.Tools, encodeTools)
	if err != nil {
		return nil, err
	}
	req.Tools = nil
	var prefix, after []byte
	stable := reqbody.StableCut(req.System, req.SystemStable)
	head, tail := req.System[:stable], req.System[stable:]+req.SystemTail
	splice := stable > 0 && (strings.TrimSpace(head) != "" || strings.TrimSpace(tail) != "")
	if splice {
		if prefix, err = c.prefixes.Escaped(head); err != nil {
			return nil, err
		}
		req.System, req.SystemStable, req.SystemTail, after = "", 0, "", systemOpen
	}
	w := buildRequest(req)
	if splice {
		w.SystemInstruction = &systemInstruction{Parts: []systemPart{{Text: tail}}}
	}
	size := len(tail) + 1024
	for _, m := range req.Messages {
		size += len(m.Content) + 64
		for _, md := range m.Media {
			size += len(md.Data) * 4 / 3
		}
	}
	return reqbody.Encode(w, size, after, prefix, tools)
}

// convertMessages builds Gemini contents: user and model turns, consecutive same-role entries
// merged, tool results as functionResponse parts in a user turn.
func convertMessages(in []messages.ChatMessage) []content {
	var out []content
	add := func(role string, parts ...part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, content{Role: role, Parts: parts})
	}
	callNames := map[string]string{} // tool call id → name, for results that lack ToolName
	for _, m := range in {
		switch m.Role {
		case messages.RoleUser:
			add("user", append(imageParts(m), textParts(m.Content)...)...)
		case messages.RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				add("user", part{Text: SystemEventPrefix + m.Content})
			}
		case messages.RoleAssistant:
			parts := textParts(m.Content)
			for i, tc := range m.ToolCalls {
				callNames[tc.ID] = tc.Name
				p := part{FunctionCall: &functionCall{Name: tc.Name, Args: callArgs(tc.Arguments)}}
				if i == 0 {
					p.ThoughtSignature = skipSignature
				}
				parts = append(parts, p)
			}
			add("model", parts...)
		case messages.RoleTool:
			name := m.ToolName
			if name == "" {
				name = callNames[m.ToolCallID]
			}
			key := "content"
			if m.IsError {
				key = "error"
			}
			add("user", part{FunctionResponse: &functionResponse{Name: name, Response: map[string]string{key: m.Content}}})
		}
	}
	if len(out) > 0 && out[0].Role == "model" {
		out = append([]content{{Role: "user", Parts: []part{{Text: "(conversation continues)"}}}}, out...)
	}
	return out
}

func textParts(s string) []part {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []part{{Text: s}}
}

// callArgs parses stored arguments; Gemini needs an object, so anything else becomes {}.
func callArgs(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	var obj map[string]json.RawMessage
	if !strings.HasPrefix(trimmed, "{") || json.Unmarshal([]byte(trimmed), &obj) != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(trimmed)
}
