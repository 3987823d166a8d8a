package openaiapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
)

// The Responses API's answers: a response object, or its events as server-sent events
// (event: <type>, data: the event with its type and sequence_number), as OpenAI sends them.

func (h *Handler) responses(w http.ResponseWriter, r *http.Request) {
	q, aerr := h.parseResponses(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	h.run(w, r, q, func(id string) string { return responseID(q.session, id) },
		func(ctx context.Context, ex *exchange, rs *reply, live *events.Subscription) error {
			if q.stream {
				return h.streamResponse(ctx, w, ex, rs, live)
			}
			return h.awaitResponse(ctx, w, ex, rs)
		})
}

// response is a Responses API response object.
type response struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	CreatedAt         int64           `json:"created_at"`
	Status            string          `json:"status"`
	Model             string          `json:"model"`
	Output            []outputItem    `json:"output"`
	OutputText        string          `json:"output_text"`
	Usage             *responseUsage  `json:"usage"`
	Error             *responseError  `json:"error"`
	IncompleteDetails *struct{}       `json:"incomplete_details"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	ToolChoice        string          `json:"tool_choice"`
	Tools             []any           `json:"tools"`
	Metadata          map[string]any  `json:"metadata"`
	Text              json.RawMessage `json:"text"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// outputItem is an item of a response's output: the assistant's message, or a function call.
type outputItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status"`
	Role      string        `json:"role,omitempty"`
	Content   *[]outputPart `json:"content,omitempty"` // a message's, even when empty
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
}

type outputPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

func responseUsageOf(u messages.Usage) *responseUsage {
	ru := &responseUsage{InputTokens: u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens, OutputTokens: u.OutputTokens}
	ru.InputTokensDetails.CachedTokens = u.CacheReadTokens
	ru.TotalTokens = ru.InputTokens + ru.OutputTokens
	return ru
}

// newResponse is the response object of rs in status.
func newResponse(rs *reply, status string, output []outputItem) response {
	text := ""
	for _, o := range output {
		if o.Content != nil {
			for _, p := range *o.Content {
				text += p.Text
			}
		}
	}
	if output == nil {
		output = []outputItem{}
	}
	return response{ID: rs.id, Object: "response", CreatedAt: rs.created, Status: status, Model: rs.model, Output: output,
		OutputText: text, ParallelToolCalls: true, ToolChoice: "auto", Tools: []any{}, Metadata: map[string]any{},
		Text: json.RawMessage(`{"format":{"type":"text"}}`)}
}

// messageItem is the assistant's message of rs with text.
func messageItem(rs *reply, text, status string) outputItem {
	parts := []outputPart{}
	if status == "completed" {
		parts = []outputPart{{Type: "output_text", Text: text, Annotations: []any{}}}
	}
	it := outputItem{Type: "message", ID: "msg_" + rs.id[len("resp_"):], Status: status, Role: "assistant", Content: &parts}
	return it
}

// callItems are the client calls of rs as function_call items.
func callItems(rs *reply) []outputItem {
	out := make([]outputItem, len(rs.calls))
	for i, c := range rs.calls {
		args := c.Arguments
		if args == "" {
			args = "{}"
		}
		out[i] = outputItem{Type: "function_call", ID: fmt.Sprintf("fc_%d_%s", i, c.ID), Status: "completed", CallID: c.ID, Name: c.Name, Arguments: &args}
	}
	return out
}

// awaitResponse answers a non-streamed request once its run ended.
func (h *Handler) awaitResponse(ctx context.Context, w http.ResponseWriter, ex *exchange, rs *reply) error {
	for {
		select {
		case ev := <-ex.events:
			if !rs.take(ev) {
				continue
			}
			if rs.failed != "" {
				writeError(w, newError(http.StatusBadGateway, "server_error", "run_failed", rs.failed))
				return nil
			}
			var output []outputItem
			if text := rs.text(); text != "" || len(rs.calls) == 0 {
				output = append(output, messageItem(rs, text, "completed"))
			}
			resp := newResponse(rs, "completed", append(output, callItems(rs)...))
			resp.Usage = responseUsageOf(rs.usage)
			writeJSON(w, http.StatusOK, resp)
			return nil
		case <-ctx.Done():
			writeError(w, h.gaveUp(ctx))
			return ctx.Err()
		}
	}
}

// streamResponse answers a streamed request with the Responses API's events: the response
// created and in progress, the assistant's message opened at its first text, its text deltas,
// the message done, each function call (added, its arguments, done), then the response
// completed (or failed).
func (h *Handler) streamResponse(ctx context.Context, w http.ResponseWriter, ex *exchange, rs *reply, live *events.Subscription) error {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	seq := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(fields)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	emit("response.created", map[string]any{"response": newResponse(rs, "in_progress", nil)})
	emit("response.in_progress", map[string]any{"response": newResponse(rs, "in_progress", nil)})
	var output []outputItem
	text, open := "", false
	msg := messageItem(rs, "", "in_progress")
	openMessage := func() {
		if open {
			return
		}
		open = true
		emit("response.output_item.added", map[string]any{"output_index": 0, "item": msg})
		emit("response.content_part.added", map[string]any{"item_id": msg.ID, "output_index": 0, "content_index": 0,
			"part": outputPart{Type: "output_text", Annotations: []any{}}})
	}
	show := func(delta string) {
		if delta == "" {
			return
		}
		openMessage()
		text += delta
		emit("response.output_text.delta", map[string]any{"item_id": msg.ID, "output_index": 0, "content_index": 0, "delta": delta, "logprobs": []any{}})
	}
	if err := h.follow(ctx, w, ex, rs, live, show); err != nil {
		e := h.gaveUp(ctx)
		failed := newResponse(rs, "failed", output)
		failed.Error = &responseError{Code: *e.Code, Message: e.Message}
		emit("response.failed", map[string]any{"response": failed})
		return err
	}
	if rs.failed != "" {
		failed := newResponse(rs, "failed", output)
		failed.Error = &responseError{Code: "server_error", Message: rs.failed}
		emit("response.failed", map[string]any{"response": failed})
		return nil
	}
	if open || len(rs.calls) == 0 {
		openMessage()
		done := messageItem(rs, text, "completed")
		part := (*done.Content)[0]
		emit("response.output_text.done", map[string]any{"item_id": msg.ID, "output_index": 0, "content_index": 0, "text": text, "logprobs": []any{}})
		emit("response.content_part.done", map[string]any{"item_id": msg.ID, "output_index": 0, "content_index": 0, "part": part})
		emit("response.output_item.done", map[string]any{"output_index": 0, "item": done})
		output = append(output, done)
	}
	for _, c := range callItems(rs) {
		i := len(output)
		args := *c.Arguments
		added := c
		added.Status, added.Arguments = "in_progress", ptr("")
		emit("response.output_item.added", map[string]any{"output_index": i, "item": added})
		emit("response.function_call_arguments.delta", map[string]any{"item_id": c.ID, "output_index": i, "delta": args})
		emit("response.function_call_arguments.done", map[string]any{"item_id": c.ID, "output_index": i, "arguments": args})
		emit("response.output_item.done", map[string]any{"output_index": i, "item": c})
		output = append(output, c)
	}
	done := newResponse(rs, "completed", output)
	done.Usage = responseUsageOf(rs.usage)
	emit("response.completed", map[string]any{"response": done})
	return nil
}
