package providers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// capped starts a fake OpenAI endpoint that serves capacity requests at once, each after
// latency, and answers 429 with Retry-After beyond that; it returns the client chain reef
// builds for it (wiring.go: the endpoint's adaptive limit, then retries) and the capacity.
func capped(t testing.TB, capacity int, latency, retryAfter time.Duration) (providers.Provider, *providers.AdaptiveLimiter, *fake.Capacity) {
	t.Helper()
	script := fake.NewScript()
	script.KeepRequests = 100
	script.Respond = func(fake.Request) fake.Reply { return fake.Reply{Text: "done", Delay: latency} }
	script.Capacity = &fake.Capacity{Max: capacity, RetryAfter: retryAfter}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	lim := providers.NewAdaptiveLimiter(providers.AdaptiveConfig{})
	client := openai.New(openai.Config{Name: "openai", BaseURL: srv.URL(), APIKey: "sk-test"})
	p := providers.Retry(providers.Adaptive(client, lim), providers.RetryConfig{})
	return p, lim, script.Capacity
}

// ask makes n calls at once and returns how many failed.
func ask(p providers.Provider, n int) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := p.Stream(context.Background(), providers.Request{Model: "m",
				Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}}})
			if err == nil {
				var a answer
				a, err = drain(s)
				if err == nil && a.Text != "done" {
					err = context.Canceled // any error: the answer is wrong
				}
			}
			if err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// TestAdaptiveOverTheWire: 400 calls at once to an endpoint that takes 50 and answers 429 with
// Retry-After beyond that. Every call is answered (the limiter shrinks to what the endpoint
// takes; the rejected calls retry within llm.maxRetries), and the limit ends near 50.
func TestAdaptiveOverTheWire(t *testing.T) {
	p, lim, capacity := capped(t, 50, 100*time.Millisecond, 50*time.Millisecond)
	if failed := ask(p, 400); failed > 0 {
		t.Errorf("%d of 400 calls failed for their user", failed)
	}
	st, cs := lim.Stats(), capacity.Stats()
	t.Logf("limiter %+v; endpoint %+v", st, cs)
	if cs.Rejected == 0 || st.Decreases == 0 {
		t.Fatalf("the endpoint rejected %d calls and the limit shrank %d times: the test did not reach the limit", cs.Rejected, st.Decreases)
	}
	if cs.Served != 400 {
		t.Errorf("the endpoint served %d calls, want 400 (one each)", cs.Served)
	}
	// The limit came down from its start (1024) towards the endpoint's reach. Where it lands
	// depends on timing: over the wire the client counts requests on their way and 429s not
	// yet read as in flight too, so on a slow machine it stays above 50 or overshoots below
	// it (seen: 10 to 116 under -race at load 12). Throughput near 50/latency is held by
	// BenchmarkAdaptive429, not here.
	if st.Limit > 256 {
		t.Errorf("limit ends at %d, want it well below its start of 1024, near the endpoint's 50", st.Limit)
	}
	if st.InFlight != 0 || st.Waiting != 0 {
		t.Errorf("after every call: %d in flight, %d waiting, want none", st.InFlight, st.Waiting)
	}
}

// BenchmarkAdaptive429 measures the throughput against an endpoint that takes 50 calls at once
// for 200 ms each and answers 429 with a Retry-After of 100 ms beyond that: 2,000 calls, all
// sent at once. "of-ideal" is 50/latency over the calls per second reached (target ≥ 0.9).
// The fixed-50 run is the oracle: a fixed limit of exactly the endpoint's capacity, what this
// machine reaches when no call is ever rejected.
func BenchmarkAdaptive429(b *testing.B) {
	const calls, capacity, latency = 2000, 50, 200 * time.Millisecond
	for _, mode := range []string{"adaptive", "fixed-50"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				p, _, c := capped(b, capacity, latency, 100*time.Millisecond)
				if mode == "fixed-50" {
					p = providers.Limit(p, providers.NewSemaphore(capacity))
				}
				start := time.Now()
				if failed := ask(p, calls); failed > 0 {
					b.Fatalf("%d calls failed", failed)
				}
				elapsed := time.Since(start)
				ideal := time.Duration(calls/capacity) * latency
				b.ReportMetric(ideal.Seconds()/elapsed.Seconds(), "of-ideal")
				b.ReportMetric(float64(c.Stats().Rejected), "429s")
			}
		})
	}
}
