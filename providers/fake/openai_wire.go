package fake

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	gojson "github.com/grbit/go-json"

	"github.com/reefgw/reef/messages"
)

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string  `json:"role"`
		Content    content `json:"content"` // a string, null, or an array of parts
		ToolCallID string  `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// record normalises the request: the leading system message becomes System, the others
// become ChatMessages (tool results named after the call they answer).
func (req chatRequest) record() Request {
	rec := Request{Model: req.Model}
	names := map[string]string{} // tool call id → name
	for i, m := range req.Messages {
		if i == 0 && m.Role == "system" {
			rec.System = string(m.Content)
			continue
		}
		cm := messages.ChatMessage{Role: messages.Role(m.Role), Content: string(m.Content)}
		switch m.Role {
		case "developer":
			cm.Role = messages.RoleSystem
		case "tool":
			cm.ToolCallID = m.ToolCallID
			cm.ToolName = names[m.ToolCallID]
		}
		for _, tc := range m.ToolCalls {
			names[tc.ID] = tc.Function.Name
			cm.ToolCalls = append(cm.ToolCalls, messages.ToolCall{
				ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
			})
		}
		rec.Messages = append(rec.Messages, cm)
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Function.Name)
	}
	return rec
}

// content is message content sent as a string, null, or an array of text parts; it decodes
// to the text. A string is decoded in one pass (the system prompt is most of a request).
type content string

func (c *content) UnmarshalJSON(raw []byte) error {
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if s, ok := unquoteSimple(raw); ok {
			*c = content(s)
			return nil
		}
		var s string
		err := gojson.Unmarshal(raw, &s)
		*c = content(s)
		return err
	case len(raw) > 0 && raw[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if gojson.Unmarshal(raw, &parts) != nil {
			*c = ""
			return nil
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		*c = content(b.String())
	default:
		*c = ""
	}
	return nil
}

// unquoteSimple decodes a JSON string without surrogate pairs (what reef's prompts hold: \n,
// \", \u003c for "<" ...); ok is false for anything else, left to the full decoder.
func unquoteSimple(raw []byte) (string, bool) {
	body := raw[1 : len(raw)-1]
	if !bytes.ContainsRune(body, '\\') {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			out = append(out, body[i:]...)
			break
		}
		out = append(out, body[i:i+j]...) // the text up to the escape, at once
		if i += j + 1; i == len(body) {
			return "", false
		}
		switch body[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'u':
			if i+4 >= len(body) {
				return "", false
			}
			r, err := strconv.ParseUint(string(body[i+1:i+5]), 16, 32)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return "", false
			}
			out = utf8.AppendRune(out, rune(r))
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

// streamer writes one streamed answer, flushing after every chunk.
type streamer struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	model string
}

func (st *streamer) send(v any) {
	b, _ := gojson.Marshal(v)
	st.w.Write([]byte("data: "))
	st.w.Write(WireEscapes(b))
	st.w.Write([]byte("\n\n"))
	st.rc.Flush()
}

// delta sends one chunk with the given delta and finish reason (nil for none).
func (st *streamer) delta(delta map[string]any, finish any) {
	st.send(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
		"model":   st.model,
		"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}},
	})
}

// cut drops the connection without finishing the response.
func (st *streamer) cut() {
	if conn, _, err := st.rc.Hijack(); err == nil {
		conn.Close()
	}
}

// play streams reply: reasoning, text and tool calls in pieces, the finish reason, a usage
// chunk and [DONE]; or a cut where the reply asks for one.
func (st *streamer) play(r Reply) {
	st.delta(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range r.Split(pieces(r.Reasoning, 2)) {
		st.delta(map[string]any{"reasoning_content": p}, nil)
	}
	textPieces := r.Split(pieces(r.Text, 3))
	if r.CutInText {
		half := r.Text[:boundary(r.Text, len(r.Text)/2)]
		for _, p := range pieces(half, 2) {
			st.delta(map[string]any{"content": p}, nil)
		}
		st.cut()
		return
	}
	for _, p := range textPieces {
		st.delta(map[string]any{"content": p}, nil)
	}
	for i, c := range r.ToolCalls {
		args := c.Arguments
		if r.CutInTool && i == 0 {
			args = args[:boundary(args, len(args)/2)]
		}
		st.delta(map[string]any{"tool_calls": []map[string]any{{
			"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}}, nil)
		for _, p := range r.Split(pieces(args, 3)) {
			st.delta(map[string]any{"tool_calls": []map[string]any{{
				"index": i, "function": map[string]any{"arguments": p},
			}}}, nil)
		}
		if r.CutInTool {
			st.cut()
			return
		}
	}
	if r.CutInTool { // no tool call to cut in: cut after the text
		st.cut()
		return
	}
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	st.delta(map[string]any{}, finish)
	u := r.Usage
	st.send(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": st.model,
		"choices": []any{},
		"usage": map[string]any{
			"prompt_tokens":         u.InputTokens + u.CacheReadTokens,
			"completion_tokens":     u.OutputTokens,
			"total_tokens":          u.InputTokens + u.CacheReadTokens + u.OutputTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheReadTokens},
		},
	})
	st.w.Write([]byte("data: [DONE]\n\n"))
	st.rc.Flush()
}

// pieces cuts s into at most n parts on rune boundaries.
func pieces(s string, n int) []string {
	var out []string
	for i := n; i > 1 && s != ""; i-- {
		at := boundary(s, len(s)/i)
		if at == 0 {
			continue
		}
		out = append(out, s[:at])
		s = s[at:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// boundary moves i back to the start of the rune it falls in.
func boundary(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
