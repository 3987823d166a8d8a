package openai

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	gojson "github.com/grbit/go-json"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/sse"
)

// stream turns the SSE chunks of one completion into providers events. Tool calls are
// assembled by index and emitted whole once the finish reason (or [DONE]) arrives; EventDone
// comes at [DONE] or at the end of the body after a finish reason, so usage precedes it.
type stream struct {
	name   string
	ctx    context.Context
	cancel context.CancelFunc
	sse    *sse.Reader

	queue    []providers.Event
	calls    []*callBuilder // in order of appearance
	byIndex  map[int]*callBuilder
	finish   string // finish_reason, once seen
	finished bool
	ncalls   int              // tool calls emitted
	text     providers.Joiner // characters cut across chunks, put back together
	think    providers.Joiner
	budget   providers.ResponseBudget
	done     bool  // EventDone queued
	err      error // sticky
}

type callBuilder struct {
	id, name string
	args     []byte
	join     providers.Joiner
	order    int // the wire index; calls without one sort after, in order of appearance
}

func (s *stream) Next() (providers.Event, error) {
	for len(s.queue) == 0 {
		if s.err != nil {
			return providers.Event{}, s.err
		}
		if s.done {
			return providers.Event{}, io.EOF
		}
		ev, err := s.sse.Next()
		if err != nil {
			s.end(err)
			continue
		}
		if ev.Data == "[DONE]" {
			s.complete()
			continue
		}
		if ev.Data == "" {
			continue
		}
		s.handle(ev.Data)
	}
	ev := s.queue[0]
	s.queue = s.queue[1:]
	return ev, nil
}

// end handles the end of the body without [DONE]. After a finish reason the answer is whole
// (some servers omit [DONE]; a drop then loses at most the usage chunk).
func (s *stream) end(err error) {
	switch {
	case s.ctx.Err() != nil:
		s.err = fmt.Errorf("%s: stream: %w", s.name, s.ctx.Err())
	case s.finished:
		s.complete()
	case errors.Is(err, sse.ErrTooLarge):
		s.err = fmt.Errorf("%s: stream: %w: %v", s.name, providers.ErrResponseTooLarge, err)
	case errors.Is(err, sse.ErrIdle):
		s.err = fmt.Errorf("%s: stream: %w", s.name, providers.ErrIdleTimeout)
	case err == io.EOF:
		s.err = fmt.Errorf("%s: stream: %w: no finish reason", s.name, providers.ErrStreamCut)
	default:
		s.err = fmt.Errorf("%s: stream: %w: %v", s.name, providers.ErrStreamCut, err)
	}
}

// handle decodes one data chunk.
func (s *stream) handle(data string) {
	var c chunk
	// go-json decodes a chunk in a quarter of encoding/json's time; a burst of replies is
	// thousands of chunks.
	if err := gojson.Unmarshal(providers.ChunkBytes(data), &c); err != nil {
		s.err = fmt.Errorf("%s: stream: bad chunk: %w", s.name, err)
		return
	}
	if c.Error != nil {
		code := string(c.Error.Code)
		status, _ := strconv.Atoi(code)
		if status < 400 {
			status = 500
		}
		s.err = providers.StatusError(s.name, status, nil, c.Error.Message, isOverflow(code+" "+c.Error.Type, c.Error.Message))
		return
	}
	if len(c.Choices) > 0 {
		ch := c.Choices[0]
		d := ch.Delta
		r := d.ReasoningContent
		if r == "" {
			r = d.Reasoning // never both: some servers send the same text in each
		}
		n := len(r) + len(d.Content)
		for _, tc := range d.ToolCalls {
			n += len(tc.Function.Arguments)
		}
		if err := s.budget.Spend(s.name, n); err != nil {
			s.err = err
			s.sse.Close()
			s.cancel()
			return
		}
		s.emitText(providers.EventReasoning, s.think.Push(r))
		s.emitText(providers.EventText, s.text.Push(d.Content))
		for _, tc := range d.ToolCalls {
			b := s.call(tc.Index, tc.ID)
			if tc.ID != "" {
				b.id = tc.ID
			}
			if n := tc.Function.Name; n != "" && n != b.name {
				b.name += n // in pieces; a server repeating the whole name adds nothing
			}
			b.args = append(b.args, b.join.Push(tc.Function.Arguments)...)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" && !s.finished {
			s.finish, s.finished = *ch.FinishReason, true
			s.emitCalls()
		}
	}
	if u := c.Usage; u != nil {
		usage := messages.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			usage.CacheReadTokens = u.PromptTokensDetails.CachedTokens
			usage.InputTokens -= usage.CacheReadTokens
		}
		s.queue = append(s.queue, providers.Event{Kind: providers.EventUsage, Usage: usage})
	}
}

// call returns the builder for a tool call delta. Deltas are matched by index; a delta
// without an index continues the last call; a new id where another call is under way starts a
// new call (servers that omit or reuse indexes).
func (s *stream) call(index *int, id string) *callBuilder {
	var b *callBuilder
	if index != nil {
		b = s.byIndex[*index]
	} else if n := len(s.calls); n > 0 {
		b = s.calls[n-1]
	}
	if b == nil || (id != "" && b.id != "" && b.id != id) {
		b = &callBuilder{order: len(s.calls) + 1<<20}
		if index != nil {
			b.order = *index
			if s.byIndex == nil {
				s.byIndex = map[int]*callBuilder{}
			}
			s.byIndex[*index] = b
		}
		s.calls = append(s.calls, b)
	}
	return b
}

func (s *stream) emitText(kind providers.EventKind, text string) {
	if text != "" {
		s.queue = append(s.queue, providers.Event{Kind: kind, Text: text})
	}
}

// emitCalls queues the assembled tool calls, after the halves of characters still held.
func (s *stream) emitCalls() {
	s.emitText(providers.EventReasoning, s.think.Flush())
	s.emitText(providers.EventText, s.text.Flush())
	slices.SortStableFunc(s.calls, func(a, b *callBuilder) int { return cmp.Compare(a.order, b.order) })
	for _, b := range s.calls {
		if b.id == "" {
			b.id = newCallID()
		}
		args := string(append(b.args, b.join.Flush()...))
		if args == "" {
			args = "{}"
		}
		s.queue = append(s.queue, providers.Event{Kind: providers.EventToolCall,
			ToolCall: messages.ToolCall{ID: b.id, Name: b.name, Arguments: args}})
	}
	s.ncalls += len(s.calls)
	s.calls, s.byIndex = nil, nil
}

// complete queues the final events at the end of a whole answer.
func (s *stream) complete() {
	if s.done {
		return
	}
	if !s.finished {
		s.emitCalls()
	}
	stop := stopReason(s.finish)
	if stop == providers.StopEnd && s.ncalls > 0 {
		stop = providers.StopToolUse
	}
	s.queue = append(s.queue, providers.Event{Kind: providers.EventDone, StopReason: stop})
	s.done = true
}

func (s *stream) Close() error {
	err := s.sse.Close()
	s.cancel()
	return err
}

func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
