package providers_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// switchPing is a probe that answers while up is set: with answer (nil, or a request error).
type switchPing struct {
	up     atomic.Bool
	calls  atomic.Int32
	answer error
}

func (p *switchPing) Ping(context.Context) error {
	p.calls.Add(1)
	if p.up.Load() {
		return p.answer
	}
	return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}

// TestBreakerOutage: an outage opens the breaker (later calls fail at once without reaching
// the server), probes back off while the server stays down, a probe that answers wakes the
// waiters once, and the next answer closes the breaker.
func TestBreakerOutage(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := testutil.NewClock(start)
	script := fakellm.NewScript(fakellm.Reply{Status: 503})
	ping := &switchPing{}
	bs := providers.NewBreakers(providers.BreakerConfig{Clock: clock, FirstProbe: 5 * time.Second, MaxProbe: 15 * time.Second})
	p := bs.Guard("fake", "http://fake", fakellm.New(script), ping)
	ctx := context.Background()

	_, err := call(ctx, p, providers.Request{})
	var oe *providers.OutageError
	if !errors.As(err, &oe) || !errors.Is(err, providers.ErrUnavailable) || !errors.Is(err, providers.ErrOverloaded) {
		t.Fatalf("err = %v, want an OutageError wrapping the 503", err)
	}
	if _, err := call(ctx, p, providers.Request{}); !errors.Is(err, providers.ErrUnavailable) {
		t.Fatalf("second call: err = %v, want it refused while open", err)
	}
	if n := len(script.Requests()); n != 1 {
		t.Fatalf("the server got %d requests, want 1: an open breaker does not call it", n)
	}
	out := bs.Outages()
	if len(out) != 1 || out[0].Provider != "fake" || !out[0].Since.Equal(start) || !out[0].NextProbe.Equal(start.Add(5*time.Second)) {
		t.Fatalf("outages = %+v, want fake since %v, next probe at +5s", out, start)
	}

	var woken atomic.Int32
	bs.Wait("chat", 2, func() { woken.Add(1) })
	if got := bs.Outages()[0].Waiting; got != 2 {
		t.Errorf("waiting = %d, want 2", got)
	}
	clock.Advance(5 * time.Second) // probe 1: down; next after 10 s
	clock.Advance(10 * time.Second)
	if got := bs.Outages()[0]; got.Probes != 2 || !got.NextProbe.Equal(start.Add(30*time.Second)) {
		t.Fatalf("after two failed probes: %+v, want the wait capped at 15 s (next at +30s)", got)
	}
	if woken.Load() != 0 {
		t.Fatal("a waiter was woken while the server was down")
	}
	ping.up.Store(true)
	clock.Advance(15 * time.Second)
	if got := woken.Load(); got != 1 {
		t.Fatalf("waiter woken %d times, want once when the probe answered", got)
	}
	if _, err := call(ctx, p, providers.Request{}); err != nil {
		t.Fatalf("call after recovery: %v", err)
	}
	if out := bs.Outages(); len(out) != 0 {
		t.Fatalf("outages after an answer = %+v, want none", out)
	}
}

// TestBreakerRequestErrors: a rejected key, a bad request and a rate limit are the request's
// problem, not an outage: the breaker stays closed and the error passes unchanged.
func TestBreakerRequestErrors(t *testing.T) {
	for _, status := range []int{401, 400, 429} {
		clock := testutil.NewClock(time.Now())
		bs := providers.NewBreakers(providers.BreakerConfig{Clock: clock})
		script := fakellm.NewScript(fakellm.Reply{Status: status}, fakellm.Reply{Text: "ok"})
		p := bs.Guard("fake", "http://fake", fakellm.New(script), nil)
		_, err := call(context.Background(), p, providers.Request{})
		if err == nil || errors.Is(err, providers.ErrUnavailable) {
			t.Errorf("status %d: err = %v, want the request error, not an outage", status, err)
		}
		if out := bs.Outages(); len(out) != 0 {
			t.Errorf("status %d: outages = %+v, want none", status, out)
		}
		if _, err := call(context.Background(), p, providers.Request{}); err != nil {
			t.Errorf("status %d: the next call failed: %v", status, err)
		}
	}
}

// TestBreakerWithoutProbe: a client without a Pinger half-opens when the wait ends; a call
// that fails again opens it with a longer wait.
func TestBreakerWithoutProbe(t *testing.T) {
	start := time.Now()
	clock := testutil.NewClock(start)
	bs := providers.NewBreakers(providers.BreakerConfig{Clock: clock, FirstProbe: time.Second})
	script := fakellm.NewScript(fakellm.Reply{Status: 500}, fakellm.Reply{Status: 529}, fakellm.Reply{Text: "back"})
	p := bs.Guard("fake", "http://fake", fakellm.New(script), nil)
	if _, err := call(context.Background(), p, providers.Request{}); !errors.Is(err, providers.ErrUnavailable) {
		t.Fatalf("err = %v, want an outage", err)
	}
	clock.Advance(time.Second)
	if _, err := call(context.Background(), p, providers.Request{}); !errors.Is(err, providers.ErrUnavailable) {
		t.Fatalf("half-open call: err = %v, want the 529 as an outage", err)
	}
	if got := bs.Outages()[0].NextProbe; !got.Equal(start.Add(3 * time.Second)) {
		t.Fatalf("next probe %v, want +3s (the wait doubled to 2 s)", got.Sub(start))
	}
	clock.Advance(2 * time.Second)
	if a, err := call(context.Background(), p, providers.Request{}); err != nil || a.Text != "back" {
		t.Fatalf("after recovery: %q, %v", a.Text, err)
	}
}

// TestBreakerProbeAnsweredWithRefusal: a server that answers the probe with a request error
// (no model list, a rejected key) is up: the waiters go, and the real call tells the error.
func TestBreakerProbeAnsweredWithRefusal(t *testing.T) {
	for _, answer := range []error{
		providers.StatusError("fake", 404, nil, "no such endpoint", false),
		providers.StatusError("fake", 401, nil, "bad key", false),
	} {
		clock := testutil.NewClock(time.Now())
		ping := &switchPing{answer: answer}
		bs := providers.NewBreakers(providers.BreakerConfig{Clock: clock, FirstProbe: time.Second})
		p := bs.Guard("fake", "http://fake", fakellm.New(fakellm.NewScript(fakellm.Reply{Status: 503})), ping)
		if _, err := call(context.Background(), p, providers.Request{}); !errors.Is(err, providers.ErrUnavailable) {
			t.Fatalf("err = %v, want an outage", err)
		}
		var woken atomic.Int32
		bs.Wait("chat", 1, func() { woken.Add(1) })
		clock.Advance(time.Second) // still down: refused
		ping.up.Store(true)
		clock.Advance(2 * time.Second) // answers, with a refusal
		if woken.Load() != 1 {
			t.Errorf("probe answered %v: waiter woken %d times, want once", answer, woken.Load())
		}
	}
}

// hangPing is a server that accepts the probe and never answers.
type hangPing struct{}

func (hangPing) Ping(ctx context.Context) error {
	<-ctx.Done()
	return fmt.Errorf("fake: list models: %w", ctx.Err())
}

// TestBreakerProbeTimeout: a probe that gets no answer within its time limit is a failed
// probe, not an answer: nobody is woken and the next probe is scheduled.
func TestBreakerProbeTimeout(t *testing.T) {
	start := time.Now()
	clock := testutil.NewClock(start)
	bs := providers.NewBreakers(providers.BreakerConfig{Clock: clock, FirstProbe: time.Second, ProbeTimeout: 20 * time.Millisecond})
	p := bs.Guard("fake", "http://fake", fakellm.New(fakellm.NewScript(fakellm.Reply{Status: 500})), hangPing{})
	if _, err := call(context.Background(), p, providers.Request{}); !errors.Is(err, providers.ErrUnavailable) {
		t.Fatalf("err = %v, want an outage", err)
	}
	var woken atomic.Int32
	bs.Wait("chat", 1, func() { woken.Add(1) })
	clock.Advance(time.Second)
	if woken.Load() != 0 {
		t.Fatal("a probe that timed out woke the waiters")
	}
	if out := bs.Outages(); len(out) != 1 || out[0].Probes != 1 || !out[0].NextProbe.Equal(start.Add(3*time.Second)) {
		t.Fatalf("outages = %+v, want one failed probe and the next after 2 s", out)
	}
}
