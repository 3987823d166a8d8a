package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Defaults of AdaptiveConfig.
const (
	// DefaultAdaptiveStart is where the limit of an endpoint starts: generous, so that a
	// burst of a thousand conversations is not cut into waves before the endpoint said a word.
	DefaultAdaptiveStart = 1024
	// DefaultAdaptiveCeiling bounds the limit when no ceiling is configured.
	DefaultAdaptiveCeiling = 4096
	// DefaultAdaptiveBackoff is the factor the limit shrinks by when the endpoint says it is
	// overloaded.
	DefaultAdaptiveBackoff = 0.9
)

// AdaptiveConfig tunes an AdaptiveLimiter. Zero fields take the defaults.
type AdaptiveConfig struct {
	// Ceiling is a hard bound on calls in flight (llm.maxConcurrent when set); 0 means
	// DefaultAdaptiveCeiling.
	Ceiling int
	Start   int     // the first limit; default min(Ceiling, DefaultAdaptiveStart)
	Min     int     // the limit never goes below it; default 1
	Backoff float64 // multiplicative decrease on overload, in (0, 1); default 0.9
}

func (c AdaptiveConfig) withDefaults() AdaptiveConfig {
	if c.Ceiling <= 0 {
		c.Ceiling = DefaultAdaptiveCeiling
	}
	if c.Start <= 0 {
		c.Start = DefaultAdaptiveStart
	}
	c.Start = min(c.Start, c.Ceiling)
	if c.Min <= 0 {
		c.Min = 1
	}
	c.Min = min(c.Min, c.Ceiling)
	if c.Backoff <= 0 || c.Backoff >= 1 {
		c.Backoff = DefaultAdaptiveBackoff
	}
	return c
}

// AdaptiveLimiter bounds the calls in flight to one provider endpoint with a limit that
// adapts, AIMD-like: it starts generous, grows by one per limit's worth of calls that
// succeed while it binds, and shrinks when the endpoint answers that it is overloaded (429,
// 503, 529, a Retry-After): to the calls still in flight, times Backoff once per round
// (the first overload among calls started since the last decrease), so a burst of
// rejections lowers it once by the factor and then down to what the endpoint accepted. It
// never exceeds the ceiling. When calls wait, PriorityPeople calls go before
// PriorityBackground ones, each in arrival order. Safe for concurrent use.
type AdaptiveLimiter struct {
	cfg AdaptiveConfig

	mu       sync.Mutex
	limit    float64
	inFlight int
	round    uint64           // bumped by each decrease by the factor
	queues   [2][]*slotWaiter // by Priority
	stats    AdaptiveStats
}

// AdaptiveStats describe a limiter (reef status, tests).
type AdaptiveStats struct {
	Limit      int // the current limit
	InFlight   int
	Waiting    int
	Overloads  int // answers that said the endpoint was overloaded
	Decreases  int // of them, those that shrank the limit
	MaxLimit   int // highest limit reached
	MinLimit   int // lowest limit reached
	BgDeferred int // background calls that had to wait while people's calls went first
}

type slotWaiter struct {
	ready   chan uint64 // receives the round of the granted slot
	granted bool
}

// NewAdaptiveLimiter returns a limiter with cfg's settings.
func NewAdaptiveLimiter(cfg AdaptiveConfig) *AdaptiveLimiter {
	cfg = cfg.withDefaults()
	l := &AdaptiveLimiter{cfg: cfg, limit: float64(cfg.Start)}
	l.stats.MaxLimit, l.stats.MinLimit = cfg.Start, cfg.Start
	return l
}

// Stats returns a snapshot of the limiter's state.
func (l *AdaptiveLimiter) Stats() AdaptiveStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Limit, s.InFlight, s.Waiting = int(l.limit), l.inFlight, len(l.queues[0])+len(l.queues[1])
	return s
}

// Outcome is how a call ended, for the limiter.
type Outcome int

const (
	OutcomeDone       Outcome = iota // neither success nor overload (cancelled, a bad request, a 500)
	OutcomeSuccess                   // the endpoint answered in full
	OutcomeOverloaded                // the endpoint said it is overloaded
)

// OutcomeOf classifies the error a call ended with (nil or io.EOF: success).
func OutcomeOf(err error) Outcome {
	var api *APIError
	switch {
	case err == nil:
		return OutcomeSuccess
	case errors.Is(err, ErrRateLimited), errors.Is(err, ErrOverloaded):
		return OutcomeOverloaded
	case errors.As(err, &api) && api.RetryAfter > 0:
		return OutcomeOverloaded
	}
	return OutcomeDone
}

// Acquire waits for a slot, or until ctx ends, and returns the function that gives it back
// with the call's outcome (call it exactly once).
func (l *AdaptiveLimiter) Acquire(ctx context.Context) (release func(Outcome), err error) {
	prio := min(max(PriorityOf(ctx), PriorityPeople), PriorityBackground)
	l.mu.Lock()
	if round, ok := l.take(prio); ok {
		l.mu.Unlock()
		return l.releaser(round), nil
	}
	w := &slotWaiter{ready: make(chan uint64, 1)}
	l.queues[prio] = append(l.queues[prio], w)
	if prio == PriorityBackground && len(l.queues[PriorityPeople]) > 0 {
		l.stats.BgDeferred++
	}
	l.mu.Unlock()
	select {
	case round := <-w.ready:
		return l.releaser(round), nil
	case <-ctx.Done():
		l.mu.Lock()
		if w.granted { // granted as ctx ended: give the slot on
			l.mu.Unlock()
			l.releaser(<-w.ready)(OutcomeDone)
			return nil, ctx.Err()
		}
		q := l.queues[prio]
		for i, x := range q {
			if x == w {
				l.queues[prio] = append(q[:i:i], q[i+1:]...)
				break
			}
		}
		l.mu.Unlock()
		return nil, ctx.Err()
	}
}

// take takes a slot for a call of prio if one is free and no call that goes before it
// waits (l.mu held), and returns the round it was taken in.
func (l *AdaptiveLimiter) take(prio Priority) (uint64, bool) {
	if l.inFlight >= int(l.limit) {
		return 0, false
	}
	for p := PriorityPeople; p <= prio; p++ {
		if len(l.queues[p]) > 0 {
			return 0, false
		}
	}
	l.inFlight++
	return l.round, true
}

func (l *AdaptiveLimiter) releaser(round uint64) func(Outcome) {
	var once sync.Once
	return func(o Outcome) { once.Do(func() { l.release(round, o) }) }
}

func (l *AdaptiveLimiter) release(round uint64, o Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch o {
	case OutcomeSuccess:
		if float64(l.inFlight) >= l.limit/2 { // grow only while the limit is in use
			l.limit = min(l.limit+1/l.limit, float64(l.cfg.Ceiling))
		}
	case OutcomeOverloaded:
		l.stats.Overloads++
		target := float64(l.inFlight - 1) // what the endpoint carries besides this call
		if round == l.round {             // the first overload of this round: back off
			target *= l.cfg.Backoff
			l.round++
		}
		if target < l.limit {
			l.limit = max(target, float64(l.cfg.Min))
			l.stats.Decreases++
		}
	}
	l.stats.MaxLimit = max(l.stats.MaxLimit, int(l.limit))
	l.stats.MinLimit = min(l.stats.MinLimit, int(l.limit))
	l.inFlight--
	l.grant()
}

// grant hands free slots to waiting calls, people first (l.mu held).
func (l *AdaptiveLimiter) grant() {
	for p := range l.queues {
		for len(l.queues[p]) > 0 && l.inFlight < int(l.limit) {
			w := l.queues[p][0]
			l.queues[p] = l.queues[p][1:]
			w.granted = true
			l.inFlight++
			w.ready <- l.round
		}
	}
}

// Adaptive makes every call of p hold a slot of l from before Stream until the stream ends
// (io.EOF, an error, or Close), and tells l how the call went.
func Adaptive(p Provider, l *AdaptiveLimiter) Provider {
	return &adaptive{p: p, l: l}
}

type adaptive struct {
	p Provider
	l *AdaptiveLimiter
}

func (a *adaptive) Stream(ctx context.Context, req Request) (Stream, error) {
	release, err := a.l.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("providers: waiting for a call slot: %w", err)
	}
	s, err := a.p.Stream(ctx, req)
	if err != nil {
		release(OutcomeOf(err))
		return nil, err
	}
	return &adaptiveStream{Stream: s, release: release}, nil
}

// adaptiveStream gives its slot back exactly once: at the end of the stream, or at Close.
type adaptiveStream struct {
	Stream
	release func(Outcome)
}

func (s *adaptiveStream) Next() (Event, error) {
	ev, err := s.Stream.Next()
	if err != nil {
		if err == io.EOF {
			s.release(OutcomeSuccess)
		} else {
			s.release(OutcomeOf(err))
		}
	}
	return ev, err
}

func (s *adaptiveStream) Close() error {
	err := s.Stream.Close()
	s.release(OutcomeDone)
	return err
}

// Answered passes AnsweredBy through the wrapper.
func (s *adaptiveStream) Answered() string { return AnsweredBy(s.Stream) }
