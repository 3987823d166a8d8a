package actors_test

import (
	"testing"
	"time"

	"github.com/reefgw/reef/internal/testutil"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/schedule"
)

// every and at jobs fire on time through the Timer; a one-shot is deleted after it ran;
// disable, enable, run, runs and remove do what they say.
func TestCronKindsAndActions(t *testing.T) {
	start := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	clock := testutil.NewClock(start)
	script := fakellm.NewScript()
	h := newTimerHarness(t, timerOpts{script: script, clock: clock})
	h.say("42", "hello") // the main session jobs without a creating session run in
	h.reply()
	var every, at schedule.Job
	cronDo(t, h, "add", map[string]any{"job": map[string]any{"name": "every",
		"schedule": map[string]any{"kind": "every", "everyMs": 2 * 3600000},
		"payload":  map[string]any{"kind": "systemEvent", "text": "stretch"}, "delivery": map[string]any{"mode": "none"}}}, &every)
	cronDo(t, h, "add", map[string]any{"job": map[string]any{"name": "at",
		"schedule": map[string]any{"kind": "at", "at": "2026-11-22T10:30", "tz": "Europe/Paris"}, // 09:30 UTC
		"payload":  map[string]any{"kind": "systemEvent", "text": "call mum"}}}, &at)
	if !at.DeleteAfterRun || at.State.NextRunAtMs != start.Add(90*time.Minute).UnixMilli() {
		t.Fatalf("at job: %+v", at)
	}
	key := h.key("42")
	step := func(d time.Duration) {
		clock.Advance(d)
		settleClock(t, clock)
		waitUntil(t, "the runs to finish", func() bool { return timerIdle(t, h) && inboxEmpty(t, h.store, key) })
	}
	step(90 * time.Minute) // 09:30: the at job
	if got := h.reply(); got.ChatID != "42" {
		t.Errorf("at job reply went to %+v, want the session's last chat", got)
	}
	var jobs []schedule.Job
	waitUntil(t, "the one-shot to be deleted", func() bool {
		cronDo(t, h, "list", map[string]any{}, &jobs)
		return len(jobs) == 1
	})
	step(30 * time.Minute) // 10:00: every 2 h from 08:00
	if n := len(systemEvents(t, h.store, key, "stretch")); n != 1 {
		t.Errorf("every job ran %d times by 10:00, want 1", n)
	}
	off := false
	cronDo(t, h, "update", map[string]any{"id": every.ID, "patch": map[string]any{"enabled": off}}, nil)
	step(2 * time.Hour) // 12:00: disabled, no run
	if n := len(systemEvents(t, h.store, key, "stretch")); n != 1 {
		t.Errorf("disabled job ran: %d runs", n)
	}
	on := true
	var updated schedule.Job
	cronDo(t, h, "update", map[string]any{"id": every.ID, "patch": map[string]any{"enabled": on}}, &updated)
	if updated.State.NextRunAtMs != start.Add(6*time.Hour).UnixMilli() {
		t.Errorf("re-enabled next run %v, want 14:00", time.UnixMilli(updated.State.NextRunAtMs).UTC())
	}
	cronDo(t, h, "run", map[string]any{"id": every.ID}, nil)
	waitUntil(t, "the manual run", func() bool { return len(systemEvents(t, h.store, key, "stretch")) == 2 })
	var runs []schedule.Run
	cronDo(t, h, "runs", map[string]any{"id": every.ID}, &runs)
	if len(runs) != 2 || runs[1].Reason != "manual" {
		t.Errorf("runs = %+v", runs)
	}
	cronDo(t, h, "remove", map[string]any{"id": every.ID}, nil)
	step(3 * time.Hour)
	if n := len(systemEvents(t, h.store, key, "stretch")); n != 2 {
		t.Errorf("removed job ran: %d runs", n)
	}
	cronDo(t, h, "list", map[string]any{}, &jobs)
	if len(jobs) != 0 {
		t.Errorf("jobs after remove: %+v", jobs)
	}
}

// Through the Timer, a job at 02:30 New York time runs once on the night the clocks skip
// 02:00-03:00 (at 03:00 EDT) and once on the night 01:00-02:00 repeats.
func TestCronDSTThroughTimer(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC)) // 01:00 EST
	script := fakellm.NewScript()
	h := newTimerHarness(t, timerOpts{script: script, clock: clock})
	var gap, overlap schedule.Job
	for _, add := range []struct {
		expr string
		job  *schedule.Job
	}{{"30 2 * * *", &gap}, {"30 1 * * *", &overlap}} {
		if err := cronDo(t, h, "add", map[string]any{"job": map[string]any{
			"schedule": map[string]any{"kind": "cron", "expr": add.expr, "tz": "America/New_York"},
			"payload":  map[string]any{"kind": "agentTurn", "message": "dst " + add.expr}}}, add.job); err != nil {
			t.Fatal(err)
		}
	}
	if want := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC); gap.State.NextRunAtMs != want.UnixMilli() {
		t.Errorf("02:30 on the spring-forward night: next %v, want %v (03:00 EDT)", time.UnixMilli(gap.State.NextRunAtMs).UTC(), want)
	}
	clock.Set(time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC))
	settleClock(t, clock)
	waitUntil(t, "the gap run", func() bool { return timerIdle(t, h) && storedRuns(t, h.store, gap.ID+":") == 1 })
	// Fall back: 01:30 happens at 05:30 and 06:30 UTC; only the first runs.
	clock.Set(time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC))
	settleClock(t, clock)
	waitUntil(t, "catch-ups", func() bool { return timerIdle(t, h) })
	before := storedRuns(t, h.store, overlap.ID+":")
	for _, hhmm := range [][2]int{{5, 30}, {6, 30}, {7, 0}} {
		clock.Set(time.Date(2026, 11, 1, hhmm[0], hhmm[1], 0, 0, time.UTC))
		settleClock(t, clock)
		waitUntil(t, "the timer", func() bool { return timerIdle(t, h) })
	}
	if n := storedRuns(t, h.store, overlap.ID+":") - before; n != 1 {
		t.Errorf("01:30 on the fall-back night ran %d times, want 1", n)
	}
}
