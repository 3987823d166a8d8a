package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/reefgw/reef/providers/fake"
)

// writer writes SSE events of one streamed answer.
type writer struct {
	w http.ResponseWriter
	f http.Flusher
}

func newWriter(w http.ResponseWriter) *writer {
	return &writer{w: w, f: w.(http.Flusher)}
}

func (wr *writer) event(name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(wr.w, "event: %s\ndata: %s\n\n", name, fake.WireEscapes(b))
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

type obj = map[string]any

// play streams reply as the Messages API does. It returns early (with the connection
// dropped) for CutInText and CutInTool.
func (wr *writer) play(model string, reply fake.Reply) {
	u := reply.Usage
	wr.event("message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil,
		"usage": obj{"input_tokens": u.InputTokens, "output_tokens": 1,
			"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens},
	}})
	wr.event("ping", obj{"type": "ping"})
	index := 0
	if reply.Reasoning != "" {
		wr.event("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "thinking", "thinking": ""}})
		for _, p := range reply.Split(Pieces(reply.Reasoning, 3)) {
			wr.delta(index, obj{"type": "thinking_delta", "thinking": p})
		}
		wr.delta(index, obj{"type": "signature_delta", "signature": "c2lnbmF0dXJl"})
		wr.stopBlock(index)
		index++
	}
	if reply.Text != "" || (len(reply.ToolCalls) == 0 && reply.Reasoning == "") {
		text := reply.Text
		if reply.CutInText {
			r := []rune(text)
			text = string(r[:len(r)/2])
		}
		wr.event("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "text", "text": ""}})
		for _, p := range reply.Split(Pieces(text, 4)) {
			wr.delta(index, obj{"type": "text_delta", "text": p})
		}
		if reply.CutInText {
			wr.drop()
			return
		}
		wr.stopBlock(index)
		index++
	}
	if reply.CutInText || (reply.CutInTool && len(reply.ToolCalls) == 0) {
		wr.drop()
		return
	}
	for i, tc := range reply.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "toolu_fake_" + strconv.Itoa(i+1)
		}
		wr.event("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "tool_use", "id": id, "name": tc.Name, "input": obj{}}})
		args := tc.Arguments
		if reply.CutInTool {
			args = args[:len(args)/2]
		}
		for _, p := range reply.Split(Pieces(args, 3)) {
			wr.delta(index, obj{"type": "input_json_delta", "partial_json": p})
		}
		if reply.CutInTool {
			wr.drop()
			return
		}
		wr.stopBlock(index)
		index++
	}
	stop := "end_turn"
	if len(reply.ToolCalls) > 0 {
		stop = "tool_use"
	}
	wr.event("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": u.OutputTokens}})
	wr.event("message_stop", obj{"type": "message_stop"})
}

func (wr *writer) delta(index int, d obj) {
	wr.event("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d})
}

func (wr *writer) stopBlock(index int) {
	wr.event("content_block_stop", obj{"type": "content_block_stop", "index": index})
}

// Pieces splits s into at most n non-empty pieces at rune boundaries (the way the API streams
// deltas). An empty s yields no pieces.
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
