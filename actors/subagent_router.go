package actors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/subagent"
)

// Sub-agents, the Router's side: at most SubagentLimits.MaxConcurrent (of the default agent)
// children run across the gateway; the others wait in spawn order. A child holds its slot
// from its start until it reports its ending (subagentEnded) or its Session terminates.

// subagentGate is the Router's record of running and waiting children.
type subagentGate struct {
	running map[string]bool
	waiting []string
}

// startSubagent asks the Router to start a child whose task is in its inbox.
type startSubagent struct{ key string }

func (r *Router) maxSubagents() int {
	return r.deps.Agents[0].Subagents.withDefaults().MaxConcurrent
}

// onStartSubagent starts the child now, or queues it when the gate is full.
func (r *Router) onStartSubagent(ctx actor.Context, key string) {
	g := &r.subs
	if g.running == nil {
		g.running = map[string]bool{}
	}
	if g.running[key] || slices.Contains(g.waiting, key) {
		return
	}
	if len(g.running) >= r.maxSubagents() {
		g.waiting = append(g.waiting, key)
		r.log.Info().Str("child", key).Int("running", len(g.running)).Msg("sub-agent queued: subagents.maxConcurrent reached")
		return
	}
	g.running[key] = true
	r.session(ctx, key)
}

// release frees key's slot and starts the next waiting child.
func (r *Router) releaseSubagent(ctx actor.Context, key string) {
	g := &r.subs
	if !g.running[key] {
		return
	}
	delete(g.running, key)
	for len(g.waiting) > 0 && len(g.running) < r.maxSubagents() {
		next := g.waiting[0]
		g.waiting = g.waiting[1:]
		g.running[next] = true
		r.session(ctx, next)
	}
}

// onSubagentEnded frees the child's slot and hands its completion to the parent.
func (r *Router) onSubagentEnded(ctx actor.Context, msg *subagentEnded) {
	r.releaseSubagent(ctx, msg.key)
	if r.deps.Processes != nil && msg.completion != nil { // its job is done: its processes end with it
		r.deps.Processes.KillSession(msg.key, false)
	}
	if msg.completion != nil {
		if d := msg.completion.Subagent; d != nil {
			r.deps.Events.Publish(messages.RunEvent{Session: msg.completion.SessionKey, Time: r.deps.now(),
				Kind: messages.SubagentEnd, Child: d.ChildKey, Name: d.Label, Status: d.Status})
		}
		r.onRouteInbound(ctx, &routeInbound{in: *msg.completion})
	}
}

// onStopSubagent stops a child: a waiting one is started (it ends at once as stopped), a
// running one is told.
func (r *Router) onStopSubagent(ctx actor.Context, msg *stopSubagent) {
	g := &r.subs
	if i := slices.Index(g.waiting, msg.key); i >= 0 {
		g.waiting = slices.Delete(g.waiting, i, i+1)
		if g.running == nil {
			g.running = map[string]bool{}
		}
		g.running[msg.key] = true
	}
	rt := r.session(ctx, msg.key)
	ctx.Send(rt.pid, msg)
}

// onSessionsCall hands a session tool's call to the Session whose run made it.
func (r *Router) onSessionsCall(ctx actor.Context, msg *sessionsCall) {
	if !r.forward(ctx, msg.key, msg) {
		msg.answer(nil, fmt.Errorf("session %s is not running", msg.key))
	}
}

// isSubagentKey is subagent.IsKey, for the Router's start-up recovery.
func isSubagentKey(key string) bool { return subagent.IsKey(key) }

// sortRowsByUpdated sorts rows newest first by the timestamp key returns (RFC 3339, UTC).
func sortRowsByUpdated[T any](rows []T, key func(T) string) {
	slices.SortStableFunc(rows, func(a, b T) int { return strings.Compare(key(b), key(a)) })
}
