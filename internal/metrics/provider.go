package metrics

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// Provider wraps a model client so that each call is counted under the provider's name and
// the request's model: its latency (from the request until the stream ends), whether it
// failed, and its tokens. Wrap the bare client (below retries and failover), so that each
// attempt counts; a client's Pinger and ModelLister are not kept: probe the bare client.
func (m *Metrics) Provider(name string, p providers.Provider) providers.Provider {
	return &provider{Provider: p, name: name, m: m}
}

type provider struct {
	providers.Provider
	name string
	m    *Metrics
}

func (p *provider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	start := time.Now()
	s, err := p.Provider.Stream(ctx, req)
	if err != nil {
		p.m.modelCall(p.name, req.Model, time.Since(start), messages.Usage{}, true)
		return nil, err
	}
	return &stream{Stream: s, p: p, model: req.Model, start: start}, nil
}

// stream counts the call when it ends: at io.EOF, an error, or Close.
type stream struct {
	providers.Stream
	p     *provider
	model string
	start time.Time
	usage messages.Usage
	once  sync.Once
}

func (s *stream) Next() (providers.Event, error) {
	ev, err := s.Stream.Next()
	switch {
	case err == nil && ev.Kind == providers.EventUsage:
		s.usage = ev.Usage // last wins
	case errors.Is(err, io.EOF):
		s.end(false)
	case err != nil:
		s.end(true)
	}
	return ev, err
}

func (s *stream) Close() error {
	s.end(false) // ended early by the caller (cancelled, or enough read): not the model's failure
	return s.Stream.Close()
}

func (s *stream) end(failed bool) {
	s.once.Do(func() { s.p.m.modelCall(s.p.name, s.model, time.Since(s.start), s.usage, failed) })
}

// modelCall counts one model call.
func (m *Metrics) modelCall(provider, model string, d time.Duration, u messages.Usage, failed bool) {
	m.modelCalls.get(modelBuckets, provider, model).observe(d)
	if failed {
		m.modelErrors.add(1, provider, model)
	}
	for _, t := range []struct {
		kind string
		n    int
	}{{"input", u.InputTokens}, {"output", u.OutputTokens}, {"cache_read", u.CacheReadTokens}, {"cache_write", u.CacheWriteTokens}} {
		if t.n > 0 {
			m.tokens.add(uint64(t.n), provider, model, t.kind)
		}
	}
}
