package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
)

// The Router's start, the same at the first start and after a restart: a restarted Router is
// a fresh instance whose Sessions were all stopped by protoactor before it started again, so
// everything it knows comes from its props and the store, never from a message sent once.
//
// In Started it builds the Sessions' props (the Connectors' PIDs come with its own props),
// reads what the store says must run again (sessions with pending work, the sub-agent gate's
// queued children, the next archive due time) and asks the Gateway whether the Connectors are
// spawned (routerStarted). Messages that reach it before the answer are routed at once; the
// pending sessions are respawned and the sweep ticker started at connectorsReady, so that a
// resent reply never goes to a Connector not yet spawned at the gateway's first start.

// recovery is what the Router read from the store in Started, to act on at connectorsReady.
type recovery struct {
	pending  []string        // sessions with unanswered inbox entries or unsent replies
	children []subagent.Link // the links of the pending sessions that are sub-agents
}

// onStarted makes the Router ready to route and asks its parent for connectorsReady.
func (r *Router) onStarted(ctx actor.Context) error {
	r.sessions, r.byPID = map[string]*route{}, map[string]string{}
	if r.props == nil { // tests put a stand-in here
		r.props = SessionProps(r.deps, r.storage, ctx.Self())
	}
	err := r.loadRecovery()
	if parent := ctx.Parent(); parent != nil { // a Router under test has no Gateway
		ctx.Request(parent, &routerStarted{})
	}
	return err
}

// loadRecovery reads the sessions with pending work, notes the children the store marks
// queued (so the gate holds their messages back, waitsForSlot) and the archive's due time.
func (r *Router) loadRecovery() error {
	var pending []string
	var children []subagent.Link
	var due time.Time
	err := viewWaiting(r.deps.Store, func(rd persistence.Reader) error { // waits out a storage outage
		var err error
		if pending, err = rd.PendingSessions(); err != nil {
			return err
		}
		if due, err = subagent.NextDue(rd); err != nil { // what came due while the gateway was down, or later
			return err
		}
		for _, key := range pending {
			if l, ok, err := subagent.Get(rd, key); err != nil {
				return err
			} else if ok {
				children = append(children, l)
			}
		}
		return nil
	})
	if r.deps.Cluster != nil { // the partitions' gains start them (router_cluster.go)
		children = nil
	}
	r.noteQueued(children)
	r.noteArchive(due)
	r.recovery = &recovery{pending: pending, children: children}
	if err != nil {
		return fmt.Errorf("router: list pending sessions: %w", err)
	}
	return nil
}

// onConnectorsReady respawns the sessions a crash, a shutdown or the Router's own restart
// left with unanswered inbox entries or unsent replies (sub-agents through the gate), and
// starts sweeping. A second connectorsReady does nothing; a stopping Router starts nothing
// (what would have started waits in the store for the next start).
func (r *Router) onConnectorsReady(ctx actor.Context) {
	rec := r.recovery
	if rec == nil || r.stopping {
		return
	}
	r.recovery = nil
	linked := map[string]bool{}
	for _, l := range rec.children {
		linked[l.Child] = true
	}
	r.startPending(ctx, rec.children) // through the gate, in the order they had: at most maxConcurrent run
	for _, key := range rec.pending {
		switch {
		case linked[key]:
		case !r.owns(key): // cluster mode: another node's, or none's yet (router_cluster.go)
		case isSubagentKey(key): // no link: through the gate all the same
			r.onStartSubagent(ctx, &startSubagent{key: key})
		default:
			r.session(ctx, key)
		}
	}
	if len(rec.pending) > 0 {
		r.log.Info().Int("sessions", len(rec.pending)).Msg("recovering sessions with pending work")
	}
	r.startTicker(ctx)
	r.startClusterSweep(ctx)
}
