package actors_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/schedule"
)

// 500 jobs due in the same minute each run once, at most MaxConcurrentRuns at a time, and
// `cron list` keeps answering quickly meanwhile.
func TestCron500JobsSameMinute(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	script := fakellm.NewScript()
	var mu sync.Mutex
	inFlight, peak := 0, 0
	script.Respond = func(fakellm.Request) fakellm.Reply {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		time.Sleep(time.Millisecond) // a model takes a moment; lets concurrent runs overlap
		return fakellm.Reply{Text: "done"}
	}
	const n, limit = 500, 20
	h := newTimerHarness(t, timerOpts{script: script, clock: clock,
		timer: actors.TimerSettings{MaxJobsPerAgent: 1000, MaxConcurrentRuns: limit}})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 20 {
				errs <- cronDo(t, h, "add", map[string]any{"job": map[string]any{"name": fmt.Sprint("job", i),
					"schedule": map[string]any{"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"},
					"payload":  map[string]any{"kind": "agentTurn", "message": "do the thing"},
					"delivery": map[string]any{"mode": "none"}}}, nil)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Hour)
	// `list` must keep answering during the burst, not only once it is over. Its latency is
	// no measure of that on two shared cores (a list took 8 s at load 23 while the test
	// process got a sixth of a core), so the test asks for lists answered while the burst was
	// partly done: the Timer's mailbox is FIFO and the burst needs many of its messages, so
	// a list queued behind the whole burst would only ever see none or all of it done.
	// cronDo bounds each list by testutil.Timeout.
	var jobs []schedule.Job
	midBurst, slowest, last := 0, time.Duration(0), -1
	deadline := time.Now().Add(testutil.Timeout)
	for {
		begin := time.Now()
		if err := cronDo(t, h, "list", map[string]any{}, &jobs); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(begin))
		done := 0
		for _, j := range jobs {
			if j.State.LastStatus == "ok" {
				done++
			}
		}
		if done == n {
			break
		}
		if done > 0 {
			midBurst++
		}
		if len(script.Requests()) > n {
			t.Fatalf("%d model calls for %d jobs", len(script.Requests()), n)
		}
		if done > last { // progress: the deadline bounds a stall, not the whole burst
			last, deadline = done, time.Now().Add(testutil.Timeout)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs done, none more for %v", done, n, testutil.Timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d lists answered mid-burst, the slowest in %v", midBurst, slowest)
	if midBurst == 0 {
		t.Errorf("no list was answered while the burst was under way")
	}
	for _, j := range jobs {
		if runs := storedRuns(t, h.store, j.ID+":"); runs != 1 {
			t.Errorf("job %s ran %d times", j.Name, runs)
		}
	}
	if got := len(script.Requests()); got != n {
		t.Errorf("%d model calls, want %d", got, n)
	}
	if peak > limit {
		t.Errorf("%d cron runs in flight at once, want at most %d", peak, limit)
	}
}

// The job limit per agent, and bad input through the Timer.
func TestCronRefusals(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	h := newTimerHarness(t, timerOpts{clock: clock, timer: actors.TimerSettings{MaxJobsPerAgent: 2}})
	every := map[string]any{"job": map[string]any{"schedule": map[string]any{"kind": "every", "everyMs": 60000},
		"payload": map[string]any{"kind": "agentTurn", "message": "x"}}}
	bad := map[string]any{"job": map[string]any{"schedule": map[string]any{"kind": "cron", "expr": "0 0 31 2 *"},
		"payload": map[string]any{"kind": "systemEvent", "text": "x"}}}
	if err := cronDo(t, h, "add", bad, nil); err == nil || !strings.Contains(err.Error(), "never fires") {
		t.Errorf("Feb 31: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := cronDo(t, h, "add", every, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := cronDo(t, h, "add", every, nil); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("third job: %v, want the limit", err)
	}
	if err := cronDo(t, h, "get", map[string]any{"id": "nope"}, nil); err == nil {
		t.Error("get of an unknown job succeeded")
	}
	if err := cronDo(t, h, "add", map[string]any{"job": map[string]any{}, "bogus": 1}, nil); err == nil {
		t.Error("unknown argument accepted")
	}
}
