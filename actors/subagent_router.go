package actors

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
)

// Sub-agents, the Router's side: at most SubagentLimits.MaxConcurrent (of the default agent)
// children run across the gateway; the others wait in the order they asked. A child asks for
// a slot when it is spawned, and a child of mode "session" that ended asks again when its
// parent sends it a follow-up. It holds the slot from its start until it reports the end of
// a run with no follow-up waiting (subagentEnded) or its Session terminates.
//
// A child that waits is marked "queued" in its link in the store (and in its parent's
// Session, when live, once that is durable), and "running" again when it gets its slot, so
// subagents list, /subagents, /status and reef sessions show tell waiting from running.
// Messages for it stay in its inbox, which its Session loads when it starts; a Session that
// is still live (a child that ended and asks again) is sent them once the child has its slot.

// subagentGate is the Router's record of running and waiting children.
type subagentGate struct {
	running map[string]bool
	waiting []string
	queued  map[string]bool               // the waiting children, marked queued in the store (or being marked)
	held    map[string][]messages.Inbound // what was routed to a waiting child, sent when it gets its slot
}

type (
	// startSubagent asks the Router to run a child whose work is in its inbox: its task, or a
	// follow-up (in, routed to it once it has its slot).
	startSubagent struct {
		key string
		in  *messages.Inbound
	}
	// subagentMarked tells the parent's Session that its child's stored status changed
	// (queued, running) by the gate, or that its child was archived (subagent_archive.go).
	subagentMarked struct {
		parent, child, status string
		archived              time.Time
	}
)

func (r *Router) maxSubagents() int {
	return r.deps.agents()[0].Subagents.withDefaults().MaxConcurrent
}

// onStartSubagent starts the child now (a running one is sent in), or queues it when the
// gate is full.
func (r *Router) onStartSubagent(ctx actor.Context, msg *startSubagent) {
	g := &r.subs
	key := msg.key
	if !r.owns(key) {
		return // cluster mode: its owner hears of its inbox entry (router_cluster.go)
	}
	switch {
	case g.running[key]:
		if msg.in != nil {
			r.onRouteInbound(ctx, &routeInbound{in: *msg.in})
		}
		return
	case slices.Contains(g.waiting, key):
		r.hold(key, msg.in)
		return
	case len(g.running) >= r.maxSubagents():
		g.waiting = append(g.waiting, key)
		if !g.queued[key] { // (already marked when the store says so at start)
			r.markSubagent(ctx, key, messages.SubagentQueued)
		}
		r.hold(key, msg.in)
		r.log.Info().Str("child", key).Int("running", len(g.running)).Msg("sub-agent queued: subagents.maxConcurrent reached")
		return
	}
	r.hold(key, msg.in)
	r.admitSubagent(ctx, key)
}

// hold keeps what was routed to a waiting child until it gets its slot.
func (r *Router) hold(key string, in *messages.Inbound) {
	if in == nil {
		return
	}
	if r.subs.held == nil {
		r.subs.held = map[string][]messages.Inbound{}
	}
	r.subs.held[key] = append(r.subs.held[key], *in)
}

// admitSubagent gives key a slot and starts its Session (one that loads its inbox), or sends
// a live one what was held for it; a child that waited is marked running. While the Router
// stops nothing starts: the child stays as the store has it (queued or running), and what it
// holds waits in its inbox, for the next start.
func (r *Router) admitSubagent(ctx actor.Context, key string) {
	if r.stopping {
		return
	}
	g := &r.subs
	if g.running == nil {
		g.running = map[string]bool{}
	}
	g.running[key] = true
	if g.queued[key] {
		r.markSubagent(ctx, key, messages.SubagentRunning)
	}
	held := g.held[key]
	delete(g.held, key)
	r.session(ctx, key)
	for _, in := range held { // a Session that loaded its inbox ignores what it loaded
		r.onRouteInbound(ctx, &routeInbound{in: in})
	}
}

// markSubagent stores the gate's status of a child that has not ended (package subagent,
// SetStatus) and, once it is durable, tells the parent's Session if it is live (a Session
// loaded later reads it from the store).
func (r *Router) markSubagent(ctx actor.Context, key, status string) {
	g := &r.subs
	if status == messages.SubagentQueued {
		if g.queued == nil {
			g.queued = map[string]bool{}
		}
		g.queued[key] = true
	} else {
		delete(g.queued, key)
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	var parent string
	ctx.Send(r.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			l, changed, err := subagent.SetStatus(tx, key, status)
			if changed {
				parent = l.Parent
			}
			return err
		},
		Done: func(err error) {
			if err == nil && parent != "" {
				root.Send(self, &subagentMarked{parent: parent, child: key, status: status})
			}
		},
	})
}

// noteQueued takes, at start, the children the store marks queued: they are marked running
// when they get their slot.
func (r *Router) noteQueued(links []subagent.Link) {
	for _, l := range links {
		if l.Status == messages.SubagentQueued {
			if r.subs.queued == nil {
				r.subs.queued = map[string]bool{}
			}
			r.subs.queued[l.Child] = true
		}
	}
}

// waitsForSlot reports whether key is a child waiting for its slot: messages stored in its
// inbox wait with it (held), and it gets them when it starts.
func (r *Router) waitsForSlot(key string) bool {
	return r.subs.queued[key] // set with its place in waiting, cleared when it leaves it
}

// startPending starts, at the gateway's start, the children with work in their inbox: the
// ones that were running first, then the ones that waited, each in the order they asked for
// a slot (spawned, or sent a follow-up), so the gate takes them as it did before the stop. A
// child that ended has no slot to take: what its inbox holds (a message sent to it) runs as
// in any session.
func (r *Router) startPending(ctx actor.Context, links []subagent.Link) {
	slices.SortStableFunc(links, func(a, b subagent.Link) int {
		qa, qb := a.Status == messages.SubagentQueued, b.Status == messages.SubagentQueued
		if qa != qb {
			if qb {
				return -1
			}
			return 1
		}
		return asked(a).Compare(asked(b))
	})
	for _, l := range links {
		if !l.Active() {
			r.session(ctx, l.Child)
			continue
		}
		r.onStartSubagent(ctx, &startSubagent{key: l.Child})
	}
}

// asked is when the child last asked for a slot: its spawn, or the follow-up that made it
// run again.
func asked(l subagent.Link) time.Time {
	if !l.RunStarted.IsZero() {
		return l.RunStarted
	}
	return l.Created
}

// release frees key's slot and starts the next waiting child.
func (r *Router) releaseSubagent(ctx actor.Context, key string) {
	g := &r.subs
	if !g.running[key] {
		return
	}
	delete(g.running, key)
	for len(g.waiting) > 0 && len(g.running) < r.maxSubagents() && !r.stopping { // (stopping: they stay queued)
		next := g.waiting[0]
		g.waiting[0] = "" // the array outlives the pop: it must not keep the key
		g.waiting = g.waiting[1:]
		r.admitSubagent(ctx, next)
	}
	g.shrink()
}

// shrink lets go of the gate's maps and array once they are empty: Go maps keep their
// buckets after deletes, and a burst of queued children would otherwise pin them.
func (g *subagentGate) shrink() {
	if len(g.waiting) == 0 {
		g.waiting = nil
	}
	if len(g.held) == 0 {
		g.held = nil
	}
	if len(g.queued) == 0 {
		g.queued = nil
	}
	if len(g.running) == 0 {
		g.running = nil
	}
}

// onSubagentEnded frees the child's slot, unless follow-ups wait for its next run, and hands
// its completion to the parent.
func (r *Router) onSubagentEnded(ctx actor.Context, msg *subagentEnded) {
	if !msg.more {
		r.releaseSubagent(ctx, msg.key)
		if r.deps.Processes != nil { // its job is done: its processes end with it
			r.deps.Processes.KillSession(msg.key, false)
		}
		if rt := r.sessions[msg.key]; rt != nil {
			r.checkIdle(ctx, rt) // its job is done: unload it once it is idle (subagent_archive.go)
		}
	}
	r.noteArchive(msg.archiveDue)
	if d := msg.completion.Subagent; d != nil {
		r.deps.Events.Publish(messages.RunEvent{Session: msg.completion.SessionKey, Time: r.deps.now(),
			Kind: messages.SubagentEnd, Child: d.ChildKey, Name: d.Label, Status: d.Status})
	}
	r.onRouteInbound(ctx, &routeInbound{in: *msg.completion})
}

// onStopSubagent stops a child: a waiting one is started (it ends at once as stopped), a
// running one is told.
func (r *Router) onStopSubagent(ctx actor.Context, msg *stopSubagent) {
	g := &r.subs
	if i := slices.Index(g.waiting, msg.key); i >= 0 {
		g.waiting = slices.Delete(g.waiting, i, i+1)
		r.admitSubagent(ctx, msg.key)
	}
	if r.stopping && r.sessions[msg.key] == nil {
		return
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
