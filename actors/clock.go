package actors

import "time"

// Clock tells the time and schedules wake-ups. The Timer uses it, so tests can drive cron
// jobs and heartbeats through days in milliseconds.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d; stop cancels it (reporting whether it did).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// clock returns Deps.Clock, or the real clock.
func (d *Deps) clock() Clock {
	if d.Clock != nil {
		return d.Clock
	}
	return realClock{}
}
