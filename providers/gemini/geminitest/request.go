package geminitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// wireRequest is the part of a generateContent body the fake reads.
type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	} `json:"functionResponse"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     []byte `json:"data"` // base64 on the wire
	} `json:"inlineData"`
}

// inlineMedia is an inline data part as reef's Media: an image or audio with its bytes.
func inlineMedia(mime string, data []byte) messages.Media {
	kind := messages.MediaDocument
	switch {
	case strings.HasPrefix(mime, "image/"):
		kind = messages.MediaImage
	case strings.HasPrefix(mime, "audio/"):
		kind = messages.MediaAudio
	}
	return messages.Media{Kind: kind, MIME: mime, Data: data}
}

// decodeRequest converts a request body back to reef's vocabulary. Tool call ids do not
// exist on Gemini's wire: calls get "call_<n>" in order and each functionResponse takes the
// id of the earliest unanswered call with its name.
func decodeRequest(body []byte) (fake.Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return fake.Request{}, err
	}
	req := fake.Request{Body: body}
	if w.SystemInstruction != nil {
		for _, p := range w.SystemInstruction.Parts {
			if p.Text != nil {
				req.System += *p.Text
			}
		}
	}
	for _, t := range w.Tools {
		for _, d := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, d.Name)
		}
	}
	n := 0
	pending := map[string][]string{} // tool name → unanswered call ids
	for _, c := range w.Contents {
		switch c.Role {
		case "model":
			m := messages.ChatMessage{Role: messages.RoleAssistant}
			for _, p := range c.Parts {
				switch {
				case p.FunctionCall != nil:
					n++
					id := fmt.Sprintf("call_%d", n)
					var args bytes.Buffer
					if err := json.Compact(&args, p.FunctionCall.Args); err != nil {
						args.WriteString("{}")
					}
					pending[p.FunctionCall.Name] = append(pending[p.FunctionCall.Name], id)
					m.ToolCalls = append(m.ToolCalls, messages.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args.String()})
				case p.Text != nil && !p.Thought:
					m.Content += *p.Text
				}
			}
			req.Messages = append(req.Messages, m)
		case "user", "":
			var text []string
			var media []messages.Media
			for _, p := range c.Parts {
				switch {
				case p.InlineData != nil:
					media = append(media, inlineMedia(p.InlineData.MimeType, p.InlineData.Data))
				case p.FunctionResponse != nil:
					name := p.FunctionResponse.Name
					var id string
					if ids := pending[name]; len(ids) > 0 {
						id, pending[name] = ids[0], ids[1:]
					}
					content, isErr := responseText(p.FunctionResponse.Response)
					req.Messages = append(req.Messages, messages.ChatMessage{Role: messages.RoleTool,
						ToolCallID: id, ToolName: name, Content: content, IsError: isErr})
				case p.Text != nil:
					text = append(text, *p.Text)
				}
			}
			if len(text) > 0 || len(media) > 0 {
				req.Messages = append(req.Messages, messages.ChatMessage{Role: messages.RoleUser, Content: strings.Join(text, "\n"), Media: media})
			}
		default:
			return fake.Request{}, fmt.Errorf("role %q is not user or model", c.Role)
		}
	}
	return req, nil
}

// responseText reads a functionResponse.response: {"content": ...} or {"error": ...}.
func responseText(r map[string]any) (string, bool) {
	if e, ok := r["error"]; ok {
		return stringify(e), true
	}
	if c, ok := r["content"]; ok {
		return stringify(c), false
	}
	b, _ := json.Marshal(r)
	return string(b), false
}

func stringify(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// maxRequest is Gemini's limit on a whole request (inline data included).
const maxRequest = 20 << 20

// inlineTypes are the MIME types of inline data Gemini takes: images (no GIF), audio, video,
// PDF and text.
func inlineType(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/webp", "image/heic", "image/heif", "application/pdf", "text/plain":
		return true
	}
	return strings.HasPrefix(mime, "audio/") || strings.HasPrefix(mime, "video/")
}

// refused is Gemini's 400 message for a request it does not take as the real API does: over
// 20 MB, or inline data of a type it does not read (image/gif); "" when it takes it.
func refused(body []byte) string {
	if len(body) > maxRequest {
		return fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxRequest)
	}
	var w wireRequest
	if json.Unmarshal(body, &w) != nil {
		return ""
	}
	for _, c := range w.Contents {
		for _, p := range c.Parts {
			if p.InlineData != nil && !inlineType(p.InlineData.MimeType) {
				return "Unsupported MIME type: " + p.InlineData.MimeType
			}
		}
	}
	return ""
}
