package fake

import (
	"context"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// Provider plays a Script in process. It starts no goroutines and never sleeps unless a
// Reply asks for a Delay or a Hang, so it is cheap enough for throughput benchmarks.
type Provider struct {
	script *Script
}

var _ providers.Provider = (*Provider)(nil)

// New returns a Provider that answers every Stream call with the next Reply of script.
func New(script *Script) *Provider {
	return &Provider{script: script}
}

// Script returns the script the provider plays.
func (p *Provider) Script() *Script { return p.script }

// Stream records req in the script and plays the next Reply.
func (p *Provider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec := record(req)
	rec.Priority = providers.PriorityOf(ctx)
	r := p.script.Next(rec)
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	switch {
	case r.Hang:
		<-ctx.Done()
		return nil, ctx.Err()
	case r.Overflow:
		return nil, providers.StatusError("fake", 400, nil, "context length exceeded", true)
	case r.Status != 0:
		e := providers.StatusError("fake", r.Status, nil, fmt.Sprintf("scripted status %d", r.Status), false)
		e.RetryAfter = r.RetryAfter
		return nil, e
	}
	return &stream{ctx: ctx, events: events(r)}, nil
}

// record converts a request into what the script keeps.
func record(req providers.Request) Request {
	rec := Request{
		Model:     req.Model,
		Reasoning: req.Reasoning,
		MaxTokens: req.MaxTokens,
		System:    req.System + req.SystemTail,
		Messages:  append([]messages.ChatMessage(nil), req.Messages...),
	}
	if len(req.Tools) > 0 {
		rec.Tools = make([]string, len(req.Tools))
		for i, t := range req.Tools {
			rec.Tools[i] = t.Name
		}
	}
	return rec
}

// cutErr is what Next returns where a scripted cut drops the stream.
var cutErr = fmt.Errorf("fake: %w", providers.ErrStreamCut)

// events lays out the events of a normal or cut reply. A nil-Kind event marks the cut.
func events(r Reply) []providers.Event {
	evs := make([]providers.Event, 0, 8+len(r.ToolCalls))
	if r.Reasoning != "" {
		evs = append(evs, providers.Event{Kind: providers.EventReasoning, Text: r.Reasoning})
	}
	text := r.Text
	if r.CutInText {
		text = text[:runeBoundary(text, len(text)/2)]
	}
	for _, d := range splitText(text, 3) {
		evs = append(evs, providers.Event{Kind: providers.EventText, Text: d})
	}
	if r.CutInText || r.CutInTool { // a cut in a tool call drops the whole call
		return append(evs, providers.Event{}) // the cut
	}
	for _, c := range r.ToolCalls {
		evs = append(evs, providers.Event{Kind: providers.EventToolCall, ToolCall: c})
	}
	evs = append(evs, providers.Event{Kind: providers.EventUsage, Usage: r.Usage})
	stop := providers.StopEnd
	if len(r.ToolCalls) > 0 {
		stop = providers.StopToolUse
	}
	return append(evs, providers.Event{Kind: providers.EventDone, StopReason: stop})
}

// splitText cuts s into at most n deltas on rune boundaries.
func splitText(s string, n int) []string {
	if s == "" {
		return nil
	}
	if len(s) < 2*n {
		return []string{s}
	}
	out := make([]string, 0, n)
	for i := n; i > 1; i-- {
		at := runeBoundary(s, len(s)/i)
		if at == 0 {
			continue
		}
		out = append(out, s[:at])
		s = s[at:]
	}
	return append(out, s)
}

// runeBoundary moves i back to the start of the rune it falls in.
func runeBoundary(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// stream hands out prepared events.
type stream struct {
	ctx    context.Context
	events []providers.Event
	next   int
	err    error // sticky, after a scripted cut
	closed bool
}

func (s *stream) Next() (providers.Event, error) {
	if s.err != nil {
		return providers.Event{}, s.err
	}
	if s.closed {
		return providers.Event{}, io.EOF
	}
	if err := s.ctx.Err(); err != nil {
		return providers.Event{}, err
	}
	if s.next >= len(s.events) {
		return providers.Event{}, io.EOF
	}
	ev := s.events[s.next]
	s.next++
	if ev.Kind == 0 {
		s.err = cutErr
		return providers.Event{}, cutErr
	}
	return ev, nil
}

func (s *stream) Close() error {
	s.closed = true
	return nil
}
