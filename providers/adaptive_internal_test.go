package providers

import (
	"container/heap"
	"context"
	"testing"
	"time"
)

// simEvent is one moment of the simulated endpoint: a call's answer arrives, or a call
// rejected with Retry-After comes back to the limiter.
type simEvent struct {
	at      float64
	call    int
	retry   bool // a rejected call comes back
	reject  bool // the answer is a 429
	round   uint64
	ordinal int // ties keep insertion order
}

type simQueue []simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].ordinal < q[j].ordinal
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// simResult is what a simulated run measured.
type simResult struct {
	elapsed   float64 // virtual time until the last call succeeded
	rejected  int     // 429 answers
	maxServed int     // most calls the endpoint served at once
	attempts  map[int]int
	stats     AdaptiveStats
}

// simulate runs calls through l against an endpoint that serves at most capacity calls at
// once, each for latency, and answers any call beyond that with 429 after rejectAfter,
// asking it to come back after retryAfter. Virtual time: no clock, no goroutines; the same
// inputs give the same result.
func simulate(l *AdaptiveLimiter, calls, capacity int, latency, rejectAfter, retryAfter float64) simResult {
	res := simResult{attempts: map[int]int{}}
	var q simQueue
	ordinal := 0
	push := func(e simEvent) { ordinal++; e.ordinal = ordinal; heap.Push(&q, e) }
	var waiting []int // calls waiting for a slot, in order
	for i := range calls {
		waiting = append(waiting, i)
	}
	served, now, done := 0, 0.0, 0
	start := func() {
		for len(waiting) > 0 {
			round, ok := tryTake(l, PriorityPeople)
			if !ok {
				return
			}
			call := waiting[0]
			waiting = waiting[1:]
			res.attempts[call]++
			if served >= capacity {
				push(simEvent{at: now + rejectAfter, call: call, reject: true, round: round})
				continue
			}
			served++
			res.maxServed = max(res.maxServed, served)
			push(simEvent{at: now + latency, call: call, round: round})
		}
	}
	start()
	for done < calls {
		e := heap.Pop(&q).(simEvent)
		now = e.at
		switch {
		case e.retry:
			waiting = append(waiting, e.call)
		case e.reject:
			res.rejected++
			l.release(e.round, OutcomeOverloaded)
			push(simEvent{at: now + retryAfter, call: e.call, retry: true})
		default:
			served--
			done++
			res.elapsed = now
			l.release(e.round, OutcomeSuccess)
		}
		start()
	}
	res.stats = l.Stats()
	return res
}

// TestAdaptiveKeepsAnOverloadedEndpointBusy: against an endpoint that takes 50 calls at once
// and answers 429 with Retry-After beyond that, the adaptive limit finds the capacity and
// keeps it used: every call succeeds, and the calls finish at ≥ 90% of 50/latency.
func TestAdaptiveKeepsAnOverloadedEndpointBusy(t *testing.T) {
	tests := []struct {
		name        string
		calls       int
		retryAfter  float64
		rejectAfter float64
	}{
		{"1000 calls, Retry-After half the latency", 1000, 1, 0.05},
		{"5000 calls, Retry-After a quarter", 5000, 0.5, 0.01},
		{"2000 calls, Retry-After the latency", 2000, 2, 0.1},
	}
	const capacity, latency = 50, 2.0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewAdaptiveLimiter(AdaptiveConfig{})
			res := simulate(l, tt.calls, capacity, latency, tt.rejectAfter, tt.retryAfter)
			// The time at exactly 50 calls at once. Enough calls that the start (a burst the
			// endpoint rejects, back after one Retry-After) and the last partial wave weigh little.
			ideal := float64(tt.calls) / (capacity / latency)
			ratio := ideal / res.elapsed
			t.Logf("elapsed %.1f, ideal %.1f (%.0f%%); %d rejected; limit now %d (min %d, max %d); %d decreases",
				res.elapsed, ideal, 100*ratio, res.rejected, res.stats.Limit, res.stats.MinLimit, res.stats.MaxLimit, res.stats.Decreases)
			if ratio < 0.9 {
				t.Errorf("throughput %.0f%% of 50/latency, want ≥ 90%%", 100*ratio)
			}
			if res.rejected == 0 || res.stats.Decreases == 0 {
				t.Errorf("%d rejections, %d decreases: the endpoint's limit was never hit, the test proves nothing", res.rejected, res.stats.Decreases)
			}
			worst := 0
			for _, n := range res.attempts {
				worst = max(worst, n)
			}
			// Retry gives up after 3 retries (llm.maxRetries): no call may need more attempts.
			if worst > 4 {
				t.Errorf("a call needed %d attempts; with llm.maxRetries 3 it would have failed for its user", worst)
			}
			if res.stats.InFlight != 0 {
				t.Errorf("%d calls still in flight at the end", res.stats.InFlight)
			}
		})
	}
}

// TestAdaptiveGrows: calls that succeed while the limit is in use make it grow, up to the
// ceiling and no further.
func TestAdaptiveGrows(t *testing.T) {
	l := NewAdaptiveLimiter(AdaptiveConfig{Start: 10, Ceiling: 20})
	for range 1000 {
		var rounds []uint64
		for { // fill the limit
			r, ok := tryTake(l, PriorityPeople)
			if !ok {
				break
			}
			rounds = append(rounds, r)
		}
		for _, r := range rounds {
			l.release(r, OutcomeSuccess)
		}
	}
	if got := l.Stats().Limit; got != 20 {
		t.Errorf("limit after many successes = %d, want the ceiling 20", got)
	}
	// Successes while the limit is mostly unused do not grow it.
	l = NewAdaptiveLimiter(AdaptiveConfig{Start: 10, Ceiling: 20})
	for range 1000 {
		r, _ := tryTake(l, PriorityPeople)
		l.release(r, OutcomeSuccess)
	}
	if got := l.Stats().Limit; got != 10 {
		t.Errorf("limit after successes one at a time = %d, want 10 (unchanged)", got)
	}
}

// tryTake takes a slot without waiting.
func tryTake(l *AdaptiveLimiter, p Priority) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(p)
}

func TestAdaptivePeopleFirst(t *testing.T) {
	l := NewAdaptiveLimiter(AdaptiveConfig{Ceiling: 1})
	hold, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bg := WithPriority(context.Background(), PriorityBackground)
	order := make(chan string, 3)
	waiters := []struct {
		name string
		ctx  context.Context
	}{{"cron", bg}, {"heartbeat", bg}, {"person", context.Background()}}
	done := make(chan struct{})
	for i, w := range waiters {
		go func() {
			release, err := l.Acquire(w.ctx)
			if err != nil {
				t.Error(err)
				return
			}
			order <- w.name
			release(OutcomeSuccess)
			if i == len(waiters)-1 {
				close(done)
			}
		}()
		for l.Stats().Waiting != i+1 { // queue them in this order
			waitBriefly()
		}
	}
	if s := l.Stats(); s.BgDeferred != 0 {
		t.Errorf("BgDeferred = %d before any person waited, want 0", s.BgDeferred)
	}
	hold(OutcomeSuccess)
	var got []string
	for range waiters {
		got = append(got, <-order)
	}
	want := []string{"person", "cron", "heartbeat"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("slots went to %v, want %v (people first, then background in arrival order)", got, want)
		}
	}
	<-done
}

func TestAdaptiveCancelledWaiterLeaves(t *testing.T) {
	l := NewAdaptiveLimiter(AdaptiveConfig{Ceiling: 1})
	hold, _ := l.Acquire(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx)
		errc <- err
	}()
	for l.Stats().Waiting != 1 {
		waitBriefly()
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("Acquire after cancel = nil, want the context's error")
	}
	if s := l.Stats(); s.Waiting != 0 || s.InFlight != 1 {
		t.Errorf("after the cancel: %+v, want nobody waiting and one in flight", s)
	}
	hold(OutcomeDone)
	hold(OutcomeDone) // a second release is ignored
	if s := l.Stats(); s.InFlight != 0 {
		t.Errorf("after the release: %d in flight, want 0", s.InFlight)
	}
}

func TestOutcomeOf(t *testing.T) {
	tests := []struct {
		err  error
		want Outcome
	}{
		{nil, OutcomeSuccess},
		{&APIError{Kind: ErrRateLimited, Status: 429}, OutcomeOverloaded},
		{&APIError{Kind: ErrOverloaded, Status: 529}, OutcomeOverloaded},
		{&APIError{Kind: ErrServer, Status: 500}, OutcomeDone},
		{&APIError{Kind: ErrServer, Status: 500, RetryAfter: 1}, OutcomeOverloaded},
		{context.Canceled, OutcomeDone},
	}
	for _, tt := range tests {
		if got := OutcomeOf(tt.err); got != tt.want {
			t.Errorf("OutcomeOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// waitBriefly yields while a test polls the limiter's queue (bounded by the test's timeout).
func waitBriefly() { time.Sleep(time.Millisecond) }
