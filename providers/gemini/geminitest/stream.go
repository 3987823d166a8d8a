package geminitest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/reefgw/reef/providers/fake"
)

// writer writes the SSE chunks of one streamed answer.
type writer struct {
	w     http.ResponseWriter
	f     http.Flusher
	model string
}

func newWriter(w http.ResponseWriter, model string) *writer {
	return &writer{w: w, f: w.(http.Flusher), model: model}
}

// chunk writes one GenerateContentResponse. Gemini ends SSE lines with CRLF.
func (wr *writer) chunk(parts []obj, finish string, usage obj) {
	cand := obj{"content": obj{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	resp := obj{"candidates": []obj{cand}, "modelVersion": wr.model, "responseId": "fake"}
	if usage != nil {
		resp["usageMetadata"] = usage
	}
	b, _ := json.Marshal(resp)
	fmt.Fprintf(wr.w, "data: %s\r\n\r\n", fake.WireEscapes(b))
	wr.f.Flush()
}

// drop cuts the connection mid-stream, without the chunked-encoding terminator, so the
// client sees an unexpected end of stream.
func (wr *writer) drop() {
	wr.f.Flush()
	if hj, ok := wr.w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// play streams reply as Gemini does: thoughts and text over several chunks, then a final
// chunk with the function calls (Gemini sends each call whole), finishReason and usage.
func (wr *writer) play(reply fake.Reply) {
	u := reply.Usage
	usage := obj{
		"promptTokenCount":     u.InputTokens + u.CacheReadTokens, // Gemini's count includes the cache
		"candidatesTokenCount": u.OutputTokens,
		"totalTokenCount":      u.InputTokens + u.CacheReadTokens + u.OutputTokens,
	}
	if u.CacheReadTokens > 0 {
		usage["cachedContentTokenCount"] = u.CacheReadTokens
	}
	for _, p := range reply.Split(Pieces(reply.Reasoning, 3)) {
		wr.chunk([]obj{{"text": p, "thought": true}}, "", nil)
	}
	text := reply.Text
	if reply.CutInText {
		r := []rune(text)
		text = string(r[:len(r)/2])
	}
	pieces := reply.Split(Pieces(text, 4))
	var final []obj
	if len(reply.ToolCalls) == 0 && len(pieces) > 0 && !reply.CutInText {
		final = []obj{{"text": pieces[len(pieces)-1]}} // the last text arrives with finishReason
		pieces = pieces[:len(pieces)-1]
	}
	for _, p := range pieces {
		wr.chunk([]obj{{"text": p}}, "", nil)
	}
	if reply.CutInText || reply.CutInTool {
		wr.drop()
		return
	}
	for i, tc := range reply.ToolCalls {
		args := json.RawMessage(tc.Arguments)
		if !json.Valid(args) {
			args = json.RawMessage("{}") // Gemini sends args as an object, never broken JSON
		}
		p := obj{"functionCall": obj{"name": tc.Name, "args": args}}
		if i == 0 {
			p["thoughtSignature"] = "ZmFrZS1zaWduYXR1cmU="
		}
		final = append(final, p)
	}
	wr.chunk(final, "STOP", usage)
}

// Pieces splits s into at most n non-empty pieces at rune boundaries. An empty s yields none.
func Pieces(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	size := (len(r) + n - 1) / n
	var out []string
	for len(r) > 0 {
		k := min(size, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
