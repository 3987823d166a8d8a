package actors

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// The limiter forgets senders once their bucket refilled and their notice is a minute old,
// so its memory follows the senders of the last minutes, not everyone who ever wrote.
func TestRateLimiterForgetsIdleSenders(t *testing.T) {
	l := newRateLimiter("telegram", RateLimit{Messages: 3, Per: 10 * time.Second})
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	for i := range 10000 {
		l.take(fmt.Sprint("sender", i), t0)
	}
	for range 4 {
		l.take("flood", t0)
	}
	if !l.notify("flood", t0) || l.notify("flood", t0.Add(59*time.Second)) {
		t.Fatal("want one notice in the first minute")
	}
	if n := l.size(); n != 10001 {
		t.Fatalf("%d buckets, want 10001", n)
	}
	l.take("late", t0.Add(9*time.Second))
	if n := l.size(); n != 10002 {
		t.Fatalf("%d buckets before any refilled, want 10002 (none dropped)", n)
	}
	l.take("later", t0.Add(11*time.Second))
	if n := l.size(); n != 3 {
		t.Errorf("%d buckets once the first ones refilled, want 3 (late, later, and flood: told too recently to forget)", n)
	}
	l.take("last", t0.Add(3*time.Minute))
	if n := l.size(); n != 1 {
		t.Errorf("%d buckets after three idle minutes, want 1", n)
	}
}

func TestRateLimiterOff(t *testing.T) {
	for _, tt := range []struct {
		channel string
		limit   RateLimit
	}{{"telegram", RateLimit{}}, {"terminal", RateLimit{Messages: 1}}, {"webchat", RateLimit{Messages: 1}}} {
		if l := newRateLimiter(tt.channel, tt.limit); l != nil {
			t.Errorf("%s with %+v: a limiter, want none", tt.channel, tt.limit)
		}
		var l *rateLimiter
		for range 100 {
			if !l.take("x", time.Now()) {
				t.Fatal("the nil limiter refused a message")
			}
		}
	}
}

// Channels call deliver from several goroutines at once.
func TestRateLimiterConcurrent(t *testing.T) {
	l := newRateLimiter("discord", RateLimit{Messages: 50, Per: time.Minute})
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if l.take("s", now) {
					mu.Lock()
					taken++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if taken != 50 {
		t.Errorf("%d messages through from 8 concurrent floods, want the bucket of 50", taken)
	}
}

// BenchmarkRateLimiterTake: one take per inbound message, over 100,000 distinct senders.
func BenchmarkRateLimiterTake(b *testing.B) {
	l := newRateLimiter("telegram", RateLimit{Messages: 20, Per: time.Minute})
	keys := make([]string, 100000)
	for i := range keys {
		keys[i] = fmt.Sprint("sender", i)
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.take(keys[i%len(keys)], now.Add(time.Duration(i)*time.Microsecond))
	}
}
