package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	gojson "github.com/grbit/go-json"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/sse"
)

// stream turns Messages SSE events into providers.Events.
type stream struct {
	ctx    context.Context
	cancel context.CancelFunc // ends the request
	c      *Client
	r      *sse.Reader
	blocks map[int]*openBlock // content blocks started and not yet stopped, by index
	usage  messages.Usage
	stop   providers.StopReason
	queue  []providers.Event
	text   providers.Joiner // characters cut across deltas, put back together
	think  providers.Joiner
	budget providers.ResponseBudget
	done   bool  // EventDone was queued
	err    error // sticky terminal error (io.EOF after EventDone)
}

// openBlock is a content block being streamed.
type openBlock struct {
	kind  string // text, tool_use, thinking, ...
	id    string
	name  string
	input string // tool_use input given whole in content_block_start (some compatible servers)
	args  strings.Builder
	join  providers.Joiner
}

func newStream(ctx context.Context, cancel context.CancelFunc, c *Client, r *sse.Reader) *stream {
	return &stream{ctx: ctx, cancel: cancel, c: c, r: r, blocks: map[int]*openBlock{},
		budget: providers.NewResponseBudget(c.maxResp)}
}

// Next returns the next event, io.EOF after EventDone, or an error.
func (s *stream) Next() (providers.Event, error) {
	for len(s.queue) == 0 {
		if s.err != nil {
			return providers.Event{}, s.err
		}
		if s.done {
			s.fail(io.EOF)
			continue
		}
		ev, err := s.r.Next()
		if err != nil {
			s.fail(s.readError(err))
			continue
		}
		if err := s.handle(ev); err != nil {
			s.fail(err)
		}
	}
	ev := s.queue[0]
	s.queue = s.queue[1:]
	return ev, nil
}

// Close releases the connection. It is safe to call more than once.
func (s *stream) Close() error {
	s.r.Close()
	s.cancel()
	return nil
}

func (s *stream) fail(err error) {
	s.err = err
	s.r.Close()
	s.cancel()
}

// readError classifies a failure to read the next SSE event.
func (s *stream) readError(err error) error {
	switch {
	case errors.Is(err, sse.ErrTooLarge):
		return fmt.Errorf("%s: %w: %v", s.c.name, providers.ErrResponseTooLarge, err)
	case errors.Is(err, sse.ErrIdle):
		return fmt.Errorf("%s: no data for %s: %w", s.c.name, s.c.idle, providers.ErrIdleTimeout)
	case s.ctx.Err() != nil:
		return fmt.Errorf("%s: %w", s.c.name, s.ctx.Err())
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: stream ended before message_stop: %w", s.c.name, providers.ErrStreamCut)
	default:
		return fmt.Errorf("%s: %w: %s", s.c.name, providers.ErrStreamCut, s.c.redact(err.Error()))
	}
}

// wireEvent is the union of the SSE data payloads this client reads.
type wireEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage wireUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage wireUsage `json:"usage"`
}

type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

// merge folds reported counts into u. Like the API (and the openai client), InputTokens
// counts only the uncached input; cache reads and writes are counted apart.
func (w wireUsage) merge(u *messages.Usage) {
	if w.InputTokens != nil {
		u.InputTokens = *w.InputTokens
	}
	if w.CacheReadInputTokens != nil {
		u.CacheReadTokens = *w.CacheReadInputTokens
	}
	if w.CacheCreationInputTokens != nil {
		u.CacheWriteTokens = *w.CacheCreationInputTokens
	}
	if w.OutputTokens != nil {
		u.OutputTokens = *w.OutputTokens
	}
}

// handle processes one SSE event, queueing the events it yields.
func (s *stream) handle(ev sse.Event) error {
	if ev.Name == "error" {
		return s.c.streamError(ev.Data)
	}
	var w wireEvent
	if err := gojson.Unmarshal(providers.ChunkBytes(ev.Data), &w); err != nil { // go-json: a quarter of encoding/json's time
		return fmt.Errorf("%s: decode %s event: %w", s.c.name, ev.Name, err)
	}
	switch w.Type {
	case "message_start":
		s.mergeUsage(w.Message.Usage)
	case "content_block_start":
		cb := w.ContentBlock
		s.blocks[w.Index] = &openBlock{kind: cb.Type, id: cb.ID, name: cb.Name, input: providers.JoinText(string(cb.Input))}
	case "content_block_delta":
		return s.delta(w)
	case "content_block_stop":
		b := s.blocks[w.Index]
		delete(s.blocks, w.Index)
		s.flushText()
		if b != nil && b.kind == "tool_use" {
			b.args.WriteString(b.join.Flush())
			args := b.args.String()
			if strings.TrimSpace(args) == "" {
				args = b.input // the API streams input as deltas and starts with {}
			}
			if strings.TrimSpace(args) == "" || args == "null" {
				args = "{}"
			}
			s.emit(providers.Event{Kind: providers.EventToolCall,
				ToolCall: messages.ToolCall{ID: b.id, Name: b.name, Arguments: args}})
		}
	case "message_delta":
		if r := stopReason(w.Delta.StopReason); r != "" {
			s.stop = r
		}
		s.mergeUsage(w.Usage)
	case "message_stop":
		s.flushText()
		if s.stop == "" {
			s.stop = providers.StopEnd
		}
		s.emit(providers.Event{Kind: providers.EventUsage, Usage: s.usage})
		s.emit(providers.Event{Kind: providers.EventDone, StopReason: s.stop})
		s.done = true
	case "error":
		return s.c.streamError(ev.Data)
	}
	return nil // ping and unknown events are ignored
}

// delta handles a content_block_delta, counting its bytes against the response's bound.
func (s *stream) delta(w wireEvent) error {
	d := w.Delta
	if err := s.budget.Spend(s.c.name, len(d.Text)+len(d.Thinking)+len(d.PartialJSON)); err != nil {
		return err
	}
	switch d.Type {
	case "text_delta":
		s.emitText(providers.EventText, s.text.Push(d.Text))
	case "thinking_delta":
		s.emitText(providers.EventReasoning, s.think.Push(d.Thinking))
	case "input_json_delta":
		if b := s.blocks[w.Index]; b != nil {
			b.args.WriteString(b.join.Push(d.PartialJSON))
		}
	}
	return nil
}

// flushText emits the halves of characters still held at the end of a block.
func (s *stream) flushText() {
	s.emitText(providers.EventReasoning, s.think.Flush())
	s.emitText(providers.EventText, s.text.Flush())
}

func (s *stream) emitText(kind providers.EventKind, text string) {
	if text != "" {
		s.emit(providers.Event{Kind: kind, Text: text})
	}
}

// mergeUsage folds a usage object (message_start, or message_delta restating counts) into s.usage.
func (s *stream) mergeUsage(w wireUsage) { w.merge(&s.usage) }

func (s *stream) emit(ev providers.Event) { s.queue = append(s.queue, ev) }

// stopReason maps the API's stop_reason.
func stopReason(r string) providers.StopReason {
	switch r {
	case "tool_use":
		return providers.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return providers.StopMaxToken
	case "refusal":
		return providers.StopFiltered
	case "":
		return ""
	default: // end_turn, stop_sequence, pause_turn
		return providers.StopEnd
	}
}
