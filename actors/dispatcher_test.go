package actors

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// goroutineID is the running goroutine's id, read from its stack header.
func goroutineID() string {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	s := string(buf[:n])
	s = s[len("goroutine "):]
	for i := range len(s) {
		if s[i] == ' ' {
			return s[:i]
		}
	}
	return s
}

// pollUntil polls cond for up to 5 s.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// TestPooledDispatcherReusesWorkers: work scheduled one after another runs on a kept
// goroutine (its stack kept), not on a new one each time; work scheduled while every worker is busy never waits; idle
// workers beyond maxIdle exit at once, the others after idleFor.
func TestPooledDispatcherReusesWorkers(t *testing.T) {
	d := newPooledDispatcher(300, 2, 50*time.Millisecond)

	ids := make(chan string, 1)
	seen := map[string]bool{}
	for range 50 {
		d.Schedule(func() { ids <- goroutineID() })
		seen[<-ids] = true
		pollUntil(t, "a worker is idle again", func() bool { return d.idle.Load() >= 1 })
	}
	if len(seen) > 5 { // one, but for a rare Schedule that came before the worker was waiting
		t.Fatalf("50 runs one after another on %d goroutines, want them on a kept worker", len(seen))
	}

	release := make(chan struct{})
	var started, done sync.WaitGroup
	for range 5 { // more than maxIdle, all at once, all blocked: none may wait for another
		started.Add(1)
		done.Add(1)
		d.Schedule(func() {
			defer done.Done()
			started.Done()
			<-release
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	pollUntil(t, "the workers beyond maxIdle exit", func() bool { return d.idle.Load() <= 2 })
	pollUntil(t, "idle workers exit after idleFor", func() bool { return d.idle.Load() == 0 })
}
