package main

import (
	"slices"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/configs"
)

// effectiveConfig is c with the defaults the runtime applies after loading filled in (the
// queue mode and its cap, sub-agent and cron limits, the switches that default to on), so
// the Config page shows what reef uses rather than the zero values of a file that left them
// out. c is not changed. configs.ApplyDefaults has filled the rest already.
func effectiveConfig(c *configs.Config) *configs.Config {
	e := *c
	on := func(b *bool) *bool {
		if b != nil {
			return b
		}
		t := true
		return &t
	}
	q := &e.Session.Queue
	if q.Mode == "" {
		q.Mode = actors.QueueSteer
	}
	if q.DebounceMs == 0 {
		q.DebounceMs = int(actors.DefaultQueueDebounce / time.Millisecond)
	}
	if q.Cap == 0 {
		q.Cap = actors.DefaultQueueCap
	}
	if q.Drop == "" {
		q.Drop = actors.DropSummarize
	}
	e.Session.GreetOnNew = on(e.Session.GreetOnNew)
	e.Memory.Enabled = on(e.Memory.Enabled)
	e.Agents = slices.Clone(c.Agents)
	for i := range e.Agents {
		a := &e.Agents[i]
		a.Subagents = a.Subagents.WithDefaults()
		a.Compaction.MemoryFlush = on(a.Compaction.MemoryFlush)
	}
	t := actors.TimerSettings{MaxJobsPerAgent: c.Cron.MaxJobsPerAgent, MaxConcurrentRuns: c.Cron.MaxConcurrentRuns}.WithDefaults()
	e.Cron.MaxJobsPerAgent, e.Cron.MaxConcurrentRuns = t.MaxJobsPerAgent, t.MaxConcurrentRuns
	return &e
}
