package actors_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/schedule"
)

func hourlyJob(name string) map[string]any {
	return map[string]any{"job": map[string]any{"name": name,
		"schedule": map[string]any{"kind": "cron", "expr": "0 * * * *", "tz": "Europe/Berlin"},
		"payload":  map[string]any{"kind": "agentTurn", "message": "summarise " + name}}}
}

// A restart while the run is in progress does not run the job again: the run record and the
// job's next time were committed with the inbox entry.
func TestCronRestartMidRunNoDoubleRun(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	clock := testutil.NewClock(start)
	db := filepath.Join(t.TempDir(), "reef.db")
	script := fakellm.NewScript(fakellm.Reply{Hang: true})
	h := newTimerHarness(t, timerOpts{script: script, clock: clock, dbPath: db})
	var job schedule.Job
	if err := cronDo(t, h, "add", hourlyJob("hourly"), &job); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Minute) // 10:00 UTC: due
	waitUntil(t, "the run to reach the model", func() bool { return len(script.Requests()) == 1 })
	h.stop() // the turn hangs: the gateway stops in the middle of the run

	script2 := fakellm.NewScript()
	h2 := newTimerHarness(t, timerOpts{script: script2, clock: clock, dbPath: db})
	key := "agent:main:cron:" + job.ID
	waitUntil(t, "the interrupted run to finish", func() bool { return inboxEmpty(t, h2.store, key) })
	settleClock(t, clock)
	if n := storedRuns(t, h2.store, job.ID+":"); n != 1 {
		t.Errorf("%d runs recorded, want 1", n)
	}
	if ev := systemEvents(t, h2.store, key, "[Scheduled reminder]"); len(ev) > 1 {
		t.Errorf("the event reached the session %d times", len(ev))
	}
	var jobs []schedule.Job
	cronDo(t, h2, "list", map[string]any{}, &jobs)
	if len(jobs) != 1 || jobs[0].State.NextRunAtMs != start.Add(90*time.Minute).UnixMilli() {
		t.Errorf("after restart: %+v, want next run at 11:00 UTC", jobs)
	}
}

// After a day of downtime each job runs once (a catch-up), not once per missed time.
func TestCronDowntimeOneCatchUp(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	clock := testutil.NewClock(start)
	db := filepath.Join(t.TempDir(), "reef.db")
	h := newTimerHarness(t, timerOpts{clock: clock, dbPath: db})
	var a, b schedule.Job
	cronDo(t, h, "add", hourlyJob("a"), &a)
	cronDo(t, h, "add", hourlyJob("b"), &b)
	h.stop()

	clock.Set(start.Add(24 * time.Hour))
	script := fakellm.NewScript()
	h2 := newTimerHarness(t, timerOpts{script: script, clock: clock, dbPath: db,
		timer: actors.TimerSettings{CatchUpSpread: 4 * time.Second}})
	for i := 0; i < 4; i++ { // the catch-ups are spread over 4 s
		settleClock(t, clock)
		clock.Advance(time.Second)
	}
	waitUntil(t, "both catch-up runs", func() bool { return len(script.Requests()) == 2 })
	for _, j := range []schedule.Job{a, b} {
		if n := storedRuns(t, h2.store, j.ID+":"); n != 1 {
			t.Errorf("job %s: %d runs after a day down, want 1", j.Name, n)
		}
	}
	var jobs []schedule.Job
	cronDo(t, h2, "list", map[string]any{}, &jobs)
	want := start.Add(24*time.Hour + 30*time.Minute).UnixMilli()
	for _, j := range jobs {
		if j.State.NextRunAtMs != want {
			t.Errorf("job %s next run %v, want the next hour", j.Name, time.UnixMilli(j.State.NextRunAtMs).UTC())
		}
	}
	if n := len(script.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
}
