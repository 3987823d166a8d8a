package providers_test

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// answer is what a stream produced, folded.
type answer struct {
	Text, Reasoning string
	Calls           []messages.ToolCall
	Usage           messages.Usage
	Stop            providers.StopReason
}

// drain reads s to its end and closes it.
func drain(s providers.Stream) (answer, error) {
	var a answer
	defer s.Close()
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return a, nil
		}
		if err != nil {
			return a, err
		}
		switch ev.Kind {
		case providers.EventText:
			a.Text += ev.Text
		case providers.EventReasoning:
			a.Reasoning += ev.Text
		case providers.EventToolCall:
			a.Calls = append(a.Calls, ev.ToolCall)
		case providers.EventUsage:
			a.Usage = ev.Usage
		case providers.EventDone:
			a.Stop = ev.StopReason
		}
	}
}

// call runs one request through p and drains the answer.
func call(ctx context.Context, p providers.Provider, req providers.Request) (answer, error) {
	s, err := p.Stream(ctx, req)
	if err != nil {
		return answer{}, err
	}
	return drain(s)
}

// sleeps records the waits Retry asks for without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// funcProvider answers each call with the next function's result.
type funcProvider struct {
	mu    sync.Mutex
	calls int
	fns   []func(providers.Request) (providers.Stream, error)
}

func (p *funcProvider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn := p.fns[min(p.calls, len(p.fns)-1)]
	p.calls++
	return fn(req)
}

func (p *funcProvider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// eventStream plays events, then err (io.EOF when nil).
type eventStream struct {
	events []providers.Event
	err    error
	closes int
}

func (s *eventStream) Next() (providers.Event, error) {
	if len(s.events) == 0 {
		if s.err != nil {
			return providers.Event{}, s.err
		}
		return providers.Event{}, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *eventStream) Close() error {
	s.closes++
	return nil
}

// textDeltas makes a stream of the given text deltas ending with EventDone(StopEnd).
func textDeltas(deltas ...string) *eventStream {
	s := &eventStream{}
	for _, d := range deltas {
		s.events = append(s.events, providers.Event{Kind: providers.EventText, Text: d})
	}
	s.events = append(s.events, providers.Event{Kind: providers.EventDone, StopReason: providers.StopEnd})
	return s
}
