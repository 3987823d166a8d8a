package anthropictest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // the fake reads images' sizes as the API does
	_ "image/jpeg"
	_ "image/png"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// wireRequest is the part of a Messages request body the fake reads.
type wireRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"` // a string or an array of text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or an array of blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	OutputConfig *struct {
		Effort string `json:"effort"`
	} `json:"output_config"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a string or an array of text blocks
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"` // base64
	} `json:"source"`
}

// decodeRequest converts a request body back to reef's vocabulary; it returns the wire
// request too, for the checks the API makes.
func decodeRequest(body []byte) (fake.Request, wireRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return fake.Request{}, w, err
	}
	req, err := w.record(body)
	return req, w, err
}

// record is the request in reef's vocabulary.
func (w wireRequest) record(body []byte) (fake.Request, error) {
	req := fake.Request{Model: w.Model, Body: body}
	system, err := blocksOrText(w.System)
	if err != nil {
		return fake.Request{}, err
	}
	for _, b := range system {
		req.System += b.Text
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	toolNames := map[string]string{}
	for _, m := range w.Messages {
		blocks, err := blocksOrText(m.Content)
		if err != nil {
			return fake.Request{}, err
		}
		msgs, err := convertBack(m.Role, blocks, toolNames)
		if err != nil {
			return fake.Request{}, err
		}
		req.Messages = append(req.Messages, msgs...)
	}
	return req, nil
}

// convertBack turns one wire message into transcript entries: an assistant message with its
// tool calls, or user text and one RoleTool entry per tool_result.
func convertBack(role string, blocks []wireBlock, toolNames map[string]string) ([]messages.ChatMessage, error) {
	if role == "assistant" {
		m := messages.ChatMessage{Role: messages.RoleAssistant}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				m.Content += b.Text
			case "tool_use":
				var args bytes.Buffer
				if err := json.Compact(&args, b.Input); err != nil {
					return nil, err
				}
				toolNames[b.ID] = b.Name
				m.ToolCalls = append(m.ToolCalls, messages.ToolCall{ID: b.ID, Name: b.Name, Arguments: args.String()})
			}
		}
		return []messages.ChatMessage{m}, nil
	}
	var out []messages.ChatMessage
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_result":
			content, err := blocksOrText(b.Content)
			if err != nil {
				return nil, err
			}
			var s string
			for _, c := range content {
				s += c.Text
			}
			out = append(out, messages.ChatMessage{Role: messages.RoleTool, ToolCallID: b.ToolUseID,
				ToolName: toolNames[b.ToolUseID], Content: s, IsError: b.IsError})
		}
	}
	if len(text) > 0 {
		out = append(out, messages.ChatMessage{Role: messages.RoleUser, Content: strings.Join(text, "\n")})
	}
	return out, nil
}

// blocksOrText decodes a field the API accepts as a plain string or as an array of blocks.
func blocksOrText(raw json.RawMessage) ([]wireBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []wireBlock{{Type: "text", Text: s}}, nil
	}
	var bs []wireBlock
	err := json.Unmarshal(raw, &bs)
	return bs, err
}

// Anthropic's image limits: the base64 text of one image at most 5 MB (5,242,880
// characters), each side at most 8000 px, JPEG, PNG, GIF or WebP.
const (
	maxImageBase64 = 5 << 20
	maxImageSide   = 8000
)

var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// refusedImage is the API's invalid_request_error message for the first image of body it
// refuses, "" when it takes them all.
func refusedImage(w wireRequest) string {
	for i, m := range w.Messages {
		blocks, err := blocksOrText(m.Content)
		if err != nil {
			continue
		}
		for j, b := range blocks {
			if b.Type != "image" || b.Source == nil || b.Source.Type != "base64" {
				continue
			}
			at := fmt.Sprintf("messages.%d.content.%d.image.source.base64", i, j)
			if !imageTypes[b.Source.MediaType] {
				return fmt.Sprintf("%s.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", at)
			}
			if n := len(b.Source.Data); n > maxImageBase64 {
				return fmt.Sprintf("%s: image exceeds 5 MB maximum: %d bytes > %d bytes", at, n, maxImageBase64)
			}
			// The sides are in the image's header: decode only as much base64 as that takes.
			raw := base64.NewDecoder(base64.StdEncoding, strings.NewReader(b.Source.Data))
			if cfg, _, err := image.DecodeConfig(raw); err == nil && (cfg.Width > maxImageSide || cfg.Height > maxImageSide) {
				return fmt.Sprintf("%s.data: At least one of the image dimensions exceed max allowed size: %d pixels", at, maxImageSide)
			}
		}
	}
	return ""
}

// adaptiveOnly reports the models that take only adaptive thinking (Opus 4.7 and later);
// adaptiveToo those that take both forms (the 4.6 models).
func adaptiveOnly(model string) bool {
	for _, p := range []string{"claude-opus-4-7", "claude-opus-5", "claude-sonnet-5", "claude-mythos", "claude-fable"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

func adaptiveToo(model string) bool {
	return strings.HasPrefix(model, "claude-opus-4-6") || strings.HasPrefix(model, "claude-sonnet-4-6")
}

// refusedThinking is the API's invalid_request_error message for a thinking form the model
// does not take, "" when it takes it. extra are more models that take only adaptive thinking.
func refusedThinking(w wireRequest, extra map[string]bool) string {
	if w.Thinking == nil {
		return ""
	}
	only := adaptiveOnly(w.Model) || extra[w.Model]
	switch w.Thinking.Type {
	case "enabled":
		if only {
			return `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`
		}
		if w.Thinking.BudgetTokens < 1024 {
			return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
		}
	case "adaptive":
		if !only && !adaptiveToo(w.Model) {
			return "thinking.type: adaptive thinking is not supported on this model"
		}
		if w.OutputConfig != nil && w.OutputConfig.Effort != "" && !map[string]bool{"low": true, "medium": true, "high": true, "max": true}[w.OutputConfig.Effort] {
			return "output_config.effort: Input should be 'low', 'medium', 'high' or 'max'"
		}
	case "disabled":
		if only {
			return `"thinking.type.disabled" is not supported for this model.`
		}
	default:
		return "thinking.type: Input tag '" + w.Thinking.Type + "' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'"
	}
	return ""
}
