package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// A circuit breaker per provider endpoint tells an outage from a bad request and stops
// calling a server that is down. A call that fails with an outage error (refused or dropped
// connection, timeout, 5xx, 503/529 overloaded) after Retry's retries opens the endpoint's
// breaker: calls then fail at once with an *OutageError (no network, so Failover moves on to
// the next model without waiting out the retries again) while the breaker probes the
// endpoint with capped exponential backoff. The probe is the client's Pinger (the models
// endpoint: it costs no tokens and sends no conversation), so a dead server is not sent real
// requests. A probe answered with a request error (a server without a model list, a key
// rejected meanwhile) counts as an answer: the next real call then reports that error to the
// user instead of waiting on; a probe that gets no answer in time is a failed one. When a
// probe answers, the breaker half-opens: calls go through again and
// whoever waits (Breakers.Wait) is told; the first call that yields an event closes it, and
// one that fails with an outage error opens it again with a longer backoff. A client without
// a Pinger half-opens when the backoff ends: the next call is the probe. A request error
// (401, 400, a context overflow, a rate limit) never opens a breaker.

// ErrUnavailable matches an *OutageError: the model's server is down or overloaded.
var ErrUnavailable = errors.New("model server unavailable")

// OutageError is a call refused or failed because its endpoint is in an outage.
type OutageError struct {
	Provider string    // the provider's configured name
	Since    time.Time // when the outage began
	Err      error     // the failure that opened the breaker, or the call's own
}

func (e *OutageError) Error() string {
	return fmt.Sprintf("%s: unavailable since %s: %v", e.Provider, e.Since.Format(time.RFC3339), e.Err)
}

func (e *OutageError) Is(target error) bool { return target == ErrUnavailable }
func (e *OutageError) Unwrap() error        { return e.Err }

// Clock tells the time and schedules wake-ups (actors.Clock has the same shape).
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time                                  { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// BreakerConfig tunes Breakers. Zero fields take the defaults.
type BreakerConfig struct {
	FirstProbe   time.Duration // wait before the first probe; default 5s
	MaxProbe     time.Duration // cap of the doubling wait between probes; default 1 min
	ProbeTimeout time.Duration // one probe's time limit; default 10s
	Clock        Clock         // default the real clock
}

func (c BreakerConfig) withDefaults() BreakerConfig {
	if c.FirstProbe <= 0 {
		c.FirstProbe = 5 * time.Second
	}
	if c.MaxProbe <= 0 {
		c.MaxProbe = time.Minute
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = 10 * time.Second
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	return c
}

// Breakers holds one breaker per endpoint and the callers waiting for an outage to end.
// Safe for concurrent use. Close stops the probes.
type Breakers struct {
	cfg     BreakerConfig
	mu      sync.Mutex
	byKey   map[string]*breaker
	waiters map[string]waiter // by the waiter's key (a session)
	ids     uint64
	closed  bool
}

type waiter struct {
	id uint64
	n  int    // messages waiting, for Outages
	fn func() // called once when a breaker lets calls through again
}

// NewBreakers returns an empty set of breakers. It starts nothing.
func NewBreakers(cfg BreakerConfig) *Breakers {
	return &Breakers{cfg: cfg.withDefaults(), byKey: map[string]*breaker{}, waiters: map[string]waiter{}}
}

// Guard returns p behind the breaker of endpoint (shared by every Guard of the same
// endpoint); name is the provider's configured name, for errors and status. probe, when not
// nil, checks that the endpoint answers (a client's Pinger).
func (bs *Breakers) Guard(name, endpoint string, p Provider, probe Pinger) Provider {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.byKey[endpoint]
	if b == nil {
		b = &breaker{set: bs, name: name, probe: probe}
		bs.byKey[endpoint] = b
	}
	return &guarded{b: b, p: p}
}

// Outage is one endpoint in an outage, for /status and reef status.
type Outage struct {
	Provider  string    `json:"provider"`
	Since     time.Time `json:"since"`
	NextProbe time.Time `json:"nextProbe,omitzero"` // zero while calls go through again (half-open)
	Probes    int       `json:"probes"`             // probes that failed
	LastError string    `json:"lastError,omitempty"`
	Waiting   int       `json:"waiting"` // messages waiting for any model to come back
}

// Outages lists the endpoints in an outage, by provider name.
func (bs *Breakers) Outages() []Outage {
	if bs == nil {
		return nil
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	waiting := 0
	for _, w := range bs.waiters {
		waiting += w.n
	}
	var out []Outage
	for _, b := range bs.byKey {
		if b.state == closedState {
			continue
		}
		o := Outage{Provider: b.name, Since: b.since, Probes: b.probes, Waiting: waiting}
		if b.state == openState {
			o.NextProbe = b.nextProbe
		}
		if b.lastErr != nil {
			o.LastError = b.lastErr.Error()
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Outage) int { return strings.Compare(a.Provider, b.Provider) })
	return out
}

// Wait registers fn, to be called once (in a goroutine of the breakers) when a breaker lets
// calls through again, or at once when none is open. key identifies the waiter: a new Wait
// with the same key replaces the old one. n is how many messages wait, for Outages. stop
// removes the registration.
func (bs *Breakers) Wait(key string, n int, fn func()) (stop func()) {
	if bs == nil {
		fn()
		return func() {}
	}
	bs.mu.Lock()
	open := false
	for _, b := range bs.byKey {
		open = open || b.state == openState
	}
	if !open {
		bs.mu.Unlock()
		fn()
		return func() {}
	}
	bs.ids++
	id := bs.ids
	bs.waiters[key] = waiter{id: id, n: n, fn: fn}
	bs.mu.Unlock()
	return func() {
		bs.mu.Lock()
		defer bs.mu.Unlock()
		if cur, ok := bs.waiters[key]; ok && cur.id == id {
			delete(bs.waiters, key)
		}
	}
}

// Close stops every probe; calls still go through the breakers.
func (bs *Breakers) Close() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.closed = true
	for _, b := range bs.byKey {
		if b.stopProbe != nil {
			b.stopProbe()
			b.stopProbe = nil
		}
	}
}

// wake calls every waiter once (outside the lock) and forgets them.
func (bs *Breakers) wake() {
	bs.mu.Lock()
	ws := bs.waiters
	bs.waiters = map[string]waiter{}
	bs.mu.Unlock()
	for _, w := range ws {
		w.fn()
	}
}

type breakerState int

const (
	closedState   breakerState = iota // calls go through
	openState                         // calls fail at once; a probe is scheduled
	halfOpenState                     // a probe answered: calls go through; the first answer closes it
)

// breaker is one endpoint's state; its fields are guarded by set.mu.
type breaker struct {
	set   *Breakers
	name  string
	probe Pinger

	state     breakerState
	since     time.Time
	delay     time.Duration // the wait before the next probe
	nextProbe time.Time
	probes    int
	lastErr   error
	stopProbe func() bool
	gen       int // counts openings, so a stale probe does nothing
}

// admit reports whether a call may go; when not, the error to fail it with.
func (b *breaker) admit() error {
	b.set.mu.Lock()
	defer b.set.mu.Unlock()
	if b.state != openState {
		return nil
	}
	return &OutageError{Provider: b.name, Since: b.since, Err: b.lastErr}
}

// succeeded closes the breaker: the endpoint answered.
func (b *breaker) succeeded() {
	b.set.mu.Lock()
	wasOpen := b.state == openState
	if b.state != closedState {
		b.state, b.probes, b.lastErr, b.since = closedState, 0, nil, time.Time{}
		if b.stopProbe != nil {
			b.stopProbe()
			b.stopProbe = nil
		}
	}
	b.set.mu.Unlock()
	if wasOpen {
		b.set.wake()
	}
}

// failed opens the breaker when err is an outage, and returns the error for the caller: an
// *OutageError for an outage, err itself otherwise.
func (b *breaker) failed(ctx context.Context, err error) error {
	if !IsOutage(ctx, err) {
		return err
	}
	cfg := b.set.cfg
	b.set.mu.Lock()
	defer b.set.mu.Unlock()
	b.lastErr = err
	switch b.state {
	case closedState:
		b.since, b.delay = cfg.Clock.Now(), cfg.FirstProbe
		b.schedule()
	case halfOpenState: // the probe said yes but the call failed: back off further
		b.delay = min(2*b.delay, cfg.MaxProbe)
		b.schedule()
	}
	return &OutageError{Provider: b.name, Since: b.since, Err: err}
}

// schedule opens the breaker and schedules its next probe. Called with set.mu held.
func (b *breaker) schedule() {
	b.state = openState
	b.gen++
	if b.set.closed {
		return
	}
	gen, clock := b.gen, b.set.cfg.Clock
	b.nextProbe = clock.Now().Add(b.delay)
	if b.stopProbe != nil {
		b.stopProbe()
	}
	b.stopProbe = clock.AfterFunc(b.delay, func() { b.runProbe(gen) })
}

// runProbe asks the endpoint whether it answers: yes half-opens the breaker and wakes the
// waiters, no schedules the next probe after a doubled wait.
func (b *breaker) runProbe(gen int) {
	b.set.mu.Lock()
	if b.gen != gen || b.state != openState || b.set.closed {
		b.set.mu.Unlock()
		return
	}
	probe, cfg := b.probe, b.set.cfg
	b.set.mu.Unlock()
	var err error
	if probe != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ProbeTimeout)
		err = probe.Ping(ctx)
		if err != nil && ctx.Err() == nil && !IsOutage(context.Background(), err) {
			err = nil // it answered, if only with a refusal (no model list, a rejected key): a real call tells
		}
		cancel()
	}
	b.set.mu.Lock()
	if b.gen != gen || b.state != openState {
		b.set.mu.Unlock()
		return
	}
	if err != nil {
		b.probes++
		b.lastErr = err
		b.delay = min(2*b.delay, cfg.MaxProbe)
		b.schedule()
		b.set.mu.Unlock()
		return
	}
	b.state, b.stopProbe, b.nextProbe = halfOpenState, nil, time.Time{}
	b.set.mu.Unlock()
	b.set.wake()
}

// IsOutage reports whether err, from a call made with ctx, says the server is down or
// overloaded rather than that the request was wrong: a refused, dropped or timed-out
// connection, a 5xx answer, 503 or 529 overloaded, a stream that stalled or was cut before
// its first event. A rate limit (429), a rejected key, a bad request, a context overflow and
// the caller's own cancellation are not outages.
func IsOutage(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrAuth) || errors.Is(err, ErrBadRequest) || errors.Is(err, ErrContextOverflow) ||
		errors.Is(err, ErrRateLimited) || errors.Is(err, ErrModelNotFound) {
		return false
	}
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrOverloaded) || errors.Is(err, ErrServer) ||
		errors.Is(err, ErrStreamCut) || errors.Is(err, ErrIdleTimeout) || transient(err)
}

// guarded is one provider behind its endpoint's breaker.
type guarded struct {
	b *breaker
	p Provider
}

func (g *guarded) Stream(ctx context.Context, req Request) (Stream, error) {
	if err := g.b.admit(); err != nil {
		return nil, err
	}
	s, err := g.p.Stream(ctx, req)
	if err != nil {
		return nil, g.b.failed(ctx, err)
	}
	return &guardedStream{Stream: s, b: g.b, ctx: ctx}, nil
}

// guardedStream reports its first event, or its failure before one, to the breaker.
type guardedStream struct {
	Stream
	b       *breaker
	ctx     context.Context
	emitted bool
}

func (s *guardedStream) Next() (Event, error) {
	ev, err := s.Stream.Next()
	if s.emitted {
		return ev, err
	}
	switch {
	case err == nil:
		s.emitted = true
		s.b.succeeded()
	case err != io.EOF:
		return ev, s.b.failed(s.ctx, err)
	}
	return ev, err
}

// Answered passes AnsweredBy through the wrapper.
func (s *guardedStream) Answered() string { return AnsweredBy(s.Stream) }
