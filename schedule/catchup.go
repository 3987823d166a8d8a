package schedule

import (
	"cmp"
	"slices"
	"time"
)

// Wake is a job's first wake-up after a start.
type Wake struct {
	JobID  string
	At     time.Time
	Reason string // "due": its next run; "catch-up": its run was missed while reef was down
}

// Resume plans the wake-ups of the stored jobs when the Timer starts at now:
//   - an enabled job whose next run is ahead wakes then ("due");
//   - an enabled job whose next run has come (reef was down) runs once, however many runs it
//     missed: never a storm of replays. The missed jobs run in the order they were due,
//     spread over spread from now so that they do not all start at once ("catch-up");
//   - a disabled job, and one with no next run (a one-shot that ran), does not wake.
//
// The wakes are in job order, catch-ups last.
func Resume(jobs []Job, now time.Time, spread time.Duration) []Wake {
	var wakes []Wake
	var missed []*Job
	for i := range jobs {
		j := &jobs[i]
		switch {
		case !j.Enabled || j.State.NextRunAtMs == 0:
		case j.State.NextRunAtMs <= now.UnixMilli():
			missed = append(missed, j)
		default:
			wakes = append(wakes, Wake{JobID: j.ID, At: time.UnixMilli(j.State.NextRunAtMs), Reason: "due"})
		}
	}
	slices.SortStableFunc(missed, func(a, b *Job) int { return cmp.Compare(a.State.NextRunAtMs, b.State.NextRunAtMs) })
	for i, j := range missed {
		at := now.Add(spread * time.Duration(i) / time.Duration(len(missed)))
		wakes = append(wakes, Wake{JobID: j.ID, At: at, Reason: "catch-up"})
	}
	return wakes
}
