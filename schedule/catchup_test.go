package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestResume(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return start.Add(d).UnixMilli() }
	job := func(id string, enabled bool, next int64) Job {
		return Job{ID: id, Enabled: enabled, State: State{NextRunAtMs: next}}
	}
	tests := []struct {
		name string
		jobs []Job
		want []Wake
	}{
		{"nothing stored", nil, nil},
		{"a run ahead keeps its time", []Job{job("a", true, ms(time.Hour))},
			[]Wake{{"a", start.Add(time.Hour), "due"}}},
		{"a run due now was missed", []Job{job("a", true, ms(0))},
			[]Wake{{"a", start, "catch-up"}}},
		// Down for ten days: the job's next run is ten days old; it runs once, now.
		{"many missed runs make one catch-up", []Job{job("a", true, ms(-240*time.Hour))},
			[]Wake{{"a", start, "catch-up"}}},
		{"a disabled job does not wake", []Job{job("a", false, ms(-time.Hour)), job("b", false, ms(time.Hour))}, nil},
		{"a one-shot that ran does not wake", []Job{job("a", true, 0)}, nil},
		{"missed jobs run in the order they were due, spread out", []Job{
			job("late", true, ms(-time.Minute)), job("early", true, ms(-time.Hour)), job("middle", true, ms(-30*time.Minute)),
		}, []Wake{
			{"early", start, "catch-up"},
			{"middle", start.Add(5 * time.Second / 3), "catch-up"},
			{"late", start.Add(10 * time.Second / 3), "catch-up"},
		}},
		{"due and missed together", []Job{
			job("missed", true, ms(-time.Hour)), job("ahead", true, ms(time.Minute)), job("off", false, ms(-time.Hour)),
		}, []Wake{
			{"ahead", start.Add(time.Minute), "due"},
			{"missed", start, "catch-up"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Resume(tt.jobs, start, 5*time.Second)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resume (-want +got):\n%s", diff)
			}
		})
	}
}

// After a long downtime every missed job wakes exactly once, all within the spread: no storm.
func TestResumeNoStorm(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var jobs []Job
	for i := range 500 {
		jobs = append(jobs, Job{ID: fmt.Sprint(i), Enabled: true, State: State{NextRunAtMs: start.Add(-time.Duration(i) * time.Minute).UnixMilli()}})
	}
	spread := 5 * time.Second
	wakes := Resume(jobs, start, spread)
	seen := map[string]int{}
	for i, w := range wakes {
		seen[w.JobID]++
		if w.Reason != "catch-up" || w.At.Before(start) || !w.At.Before(start.Add(spread)) {
			t.Errorf("wake %+v: want a catch-up within [now, now+%v)", w, spread)
		}
		if i > 0 && w.At.Before(wakes[i-1].At) {
			t.Errorf("wake %d at %v before the one before it (%v)", i, w.At, wakes[i-1].At)
		}
	}
	if len(wakes) != len(jobs) || len(seen) != len(jobs) {
		t.Errorf("%d wakes for %d distinct jobs, want one per job (%d)", len(wakes), len(seen), len(jobs))
	}
}

// The catch-up run does not replay the runs it stands for: the job's next run after it is
// the first one ahead.
func TestNextAfterCatchUp(t *testing.T) {
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	catchUp := time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC) // down since the 20th
	tests := []struct {
		name string
		spec Spec
		want time.Time
	}{
		{"every minute", Spec{Kind: "every", EveryMs: 60000}, time.Date(2026, 11, 22, 12, 1, 0, 0, time.UTC)},
		{"every 7 hours keeps its phase", Spec{Kind: "every", EveryMs: 7 * 3600000}, created.Add(74 * 7 * time.Hour)},
		{"cron hourly", Spec{Kind: "cron", Expr: "0 * * * *"}, time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)},
		{"cron daily in a zone", Spec{Kind: "cron", Expr: "0 9 * * *", TZ: "Asia/Shanghai"}, time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		j := Job{Schedule: tt.spec, CreatedAtMs: created.UnixMilli()}
		got, ok := j.Next(catchUp)
		if !ok || !got.Equal(tt.want) {
			t.Errorf("%s: next after the catch-up = %v (%v), want %v", tt.name, got, ok, tt.want)
		}
	}
	at := Job{Schedule: Spec{Kind: "at", At: "2026-11-21T09:00:00Z"}, State: State{LastRunAtMs: catchUp.UnixMilli()}}
	if next, ok := at.Next(catchUp); ok {
		t.Errorf("a one-shot that ran its catch-up runs again at %v", next)
	}
}
