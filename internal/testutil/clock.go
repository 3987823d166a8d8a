package testutil

import (
	"sort"
	"sync"
	"time"
)

// Clock is a fake clock for actors.Clock: time stands still until Advance or Set moves it,
// which runs the functions that became due, in order of their deadlines.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*clockTimer
}

type clockTimer struct {
	at   time.Time
	f    func()
	done bool
}

// NewClock returns a fake clock showing now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f for d after the fake now; stop cancels it.
func (c *Clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &clockTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t and runs every function due by then (in the caller's goroutine).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	var due []*clockTimer
	live := c.timers[:0]
	for _, tm := range c.timers {
		switch {
		case tm.done:
		case !tm.at.After(t):
			tm.done = true
			due = append(due, tm)
		default:
			live = append(live, tm)
		}
	}
	c.timers = live
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, tm := range due {
		tm.f()
	}
}

// Next returns the earliest pending deadline, if any.
func (c *Clock) Next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	for _, tm := range c.timers {
		if !tm.done && (next.IsZero() || tm.at.Before(next)) {
			next = tm.at
		}
	}
	return next, !next.IsZero()
}
