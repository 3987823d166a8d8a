package providers

import "context"

// Priority orders the calls waiting for a slot of an AdaptiveLimiter when its limit binds:
// people's conversations go first, background work (heartbeats, cron jobs, sub-agents) waits.
type Priority int

const (
	// PriorityPeople is a call made to answer a person; the default.
	PriorityPeople Priority = iota
	// PriorityBackground is a call nobody is waiting for right now: a heartbeat, a cron job,
	// a sub-agent's run. It takes a free slot like any call, but when calls wait for one,
	// every waiting PriorityPeople call goes before it.
	PriorityBackground
)

type priorityKey struct{}

// WithPriority marks the calls made with ctx (and contexts derived from it) with p.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf returns the priority WithPriority gave ctx; PriorityPeople when none.
func PriorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok {
		return p
	}
	return PriorityPeople
}
