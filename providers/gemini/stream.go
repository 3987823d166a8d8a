package gemini

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	gojson "github.com/grbit/go-json"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/sse"
)

// stream turns streamed GenerateContentResponses into providers.Events.
type stream struct {
	ctx    context.Context
	cancel context.CancelFunc // ends the request
	c      *Client
	r      *sse.Reader
	nonce  string // makes generated tool call ids unique across calls
	calls  int    // function calls seen
	usage  messages.Usage
	queue  []providers.Event
	text   providers.Joiner // characters cut across chunks, put back together
	think  providers.Joiner
	budget providers.ResponseBudget
	done   bool  // EventDone was queued
	err    error // sticky terminal error (io.EOF after EventDone)
}

func newStream(ctx context.Context, cancel context.CancelFunc, c *Client, r *sse.Reader) *stream {
	b := make([]byte, 4)
	rand.Read(b)
	return &stream{ctx: ctx, cancel: cancel, c: c, r: r, nonce: hex.EncodeToString(b),
		budget: providers.NewResponseBudget(c.max)}
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
		if err := s.handle(ev.Data); err != nil {
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

// readError classifies a failure to read the next chunk.
func (s *stream) readError(err error) error {
	switch {
	case errors.Is(err, sse.ErrTooLarge):
		return fmt.Errorf("%s: %w: %v", s.c.name, providers.ErrResponseTooLarge, err)
	case errors.Is(err, sse.ErrIdle):
		return fmt.Errorf("%s: no data for %s: %w", s.c.name, s.c.idle, providers.ErrIdleTimeout)
	case s.ctx.Err() != nil:
		return fmt.Errorf("%s: %w", s.c.name, s.ctx.Err())
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: stream ended without a finish reason: %w", s.c.name, providers.ErrStreamCut)
	default:
		return fmt.Errorf("%s: %w: %s", s.c.name, providers.ErrStreamCut, s.c.redact(err.Error()))
	}
}

// chunk is one GenerateContentResponse (or an error object sent inside the stream).
type chunk struct {
	Candidates []struct {
		Content struct {
			Parts []part `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
	} `json:"usageMetadata"`
	Error *googleError `json:"error"`
}

// handle processes one chunk, queueing the events it yields.
func (s *stream) handle(data string) error {
	var ch chunk
	if err := gojson.Unmarshal(providers.ChunkBytes(data), &ch); err != nil { // go-json: a quarter of encoding/json's time
		return fmt.Errorf("%s: decode chunk: %w", s.c.name, err)
	}
	if ch.Error != nil {
		e := s.c.apiError(ch.Error.Code, nil, ch.Error)
		e.Status = 0 // the HTTP status was 200; the code is in the message
		return e
	}
	if u := ch.UsageMetadata; u != nil {
		// Thoughts are billed as output. The prompt count includes cached tokens; InputTokens
		// counts only the uncached input, as the other clients do.
		s.usage = messages.Usage{
			InputTokens:     u.PromptTokenCount - u.CachedContentTokenCount,
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens: u.CachedContentTokenCount,
		}
	}
	finish := ""
	if len(ch.Candidates) > 0 {
		cand := ch.Candidates[0]
		for _, p := range cand.Content.Parts {
			if err := s.budget.Spend(s.c.name, len(p.Text)+len(p.FunctionCall.argBytes())); err != nil {
				return err
			}
			s.part(p)
		}
		finish = cand.FinishReason
	} else if ch.PromptFeedback != nil && ch.PromptFeedback.BlockReason != "" {
		finish = "SAFETY" // the prompt itself was blocked
	}
	if finish != "" {
		s.emitText(providers.EventReasoning, s.think.Flush())
		s.emitText(providers.EventText, s.text.Flush())
		s.emit(providers.Event{Kind: providers.EventUsage, Usage: s.usage})
		s.emit(providers.Event{Kind: providers.EventDone, StopReason: s.stopReason(finish)})
		s.done = true
	}
	return nil
}

func (s *stream) part(p part) {
	switch {
	case p.FunctionCall != nil:
		s.calls++
		args := "{}"
		if len(p.FunctionCall.Args) > 0 && string(p.FunctionCall.Args) != "null" {
			args = providers.JoinText(string(p.FunctionCall.Args))
		}
		id := p.FunctionCall.ID
		if id == "" {
			id = "call_" + s.nonce + "_" + strconv.Itoa(s.calls)
		}
		s.emit(providers.Event{Kind: providers.EventToolCall,
			ToolCall: messages.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args}})
	case p.Text == "":
	case p.Thought:
		s.emitText(providers.EventReasoning, s.think.Push(p.Text))
	default:
		s.emitText(providers.EventText, s.text.Push(p.Text))
	}
}

func (s *stream) emit(ev providers.Event) { s.queue = append(s.queue, ev) }

func (s *stream) emitText(kind providers.EventKind, text string) {
	if text != "" {
		s.emit(providers.Event{Kind: kind, Text: text})
	}
}

// stopReason maps finishReason; a call that asked for tools stops for tool use whatever
// the reason says (Gemini answers STOP).
func (s *stream) stopReason(r string) providers.StopReason {
	if s.calls > 0 {
		return providers.StopToolUse
	}
	switch r {
	case "MAX_TOKENS":
		return providers.StopMaxToken
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE":
		return providers.StopFiltered
	default: // STOP, OTHER, MALFORMED_FUNCTION_CALL, ...
		return providers.StopEnd
	}
}

// argBytes is the size of a call's arguments (0 for no call).
func (fc *functionCall) argBytes() []byte {
	if fc == nil {
		return nil
	}
	return fc.Args
}
