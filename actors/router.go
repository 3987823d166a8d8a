package actors

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/sessionkey"
)

// Router maps session keys to live Session actors. It spawns a Session on the first message
// for its key (or at start, for sessions a crash left with pending work) and passivates
// Sessions that stayed idle for SessionSettings.IdleAfter (router_passivate.go): its map
// holds live sessions only.
type Router struct {
	deps       *Deps
	storage    *actor.PID
	props      *actor.Props // shared by every Session
	sessions   map[string]*route
	byPID      map[string]string // pid id → session key, until the Session has terminated
	high       int               // most entries byPID had since the maps were last rebuilt
	spawned    uint64
	checks     uint64 // idle checks sent; each one's number is its token
	stopTicker func()
	recovery   *recovery              // what the store says to restart, until connectorsReady (router_start.go)
	subs       subagentGate           // running and waiting sub-agents (subagent_router.go)
	archive    subagentArchive        // the next finished sub-agent to archive (subagent_archive.go)
	replies    map[string]chan string // sessions_send callers waiting for a reply (subagent_send.go)
	// stopping: the Router stops (or restarts) and its Sessions with it; it must spawn no
	// new one (protoactor delivers user messages while an actor stops, and a child spawned
	// then is never stopped). What would have started waits in the store (inbox, links) for
	// the next start.
	stopping bool
	// sweeping: a read of the pending sessions runs (cluster mode, router_cluster.go).
	sweeping          bool
	stopClusterTicker func()
	log               zerolog.Logger
}

// route is the Router's record of one live Session.
type route struct {
	pid       *actor.PID
	forwarded int       // inbound messages sent to it
	idleSince time.Time // when it last reported idle; zero while busy
	check     uint64    // token of the last idle check sent to it
	checkedAt int       // forwarded when that check was sent
}

// Router messages.
type (
	routeInbound struct{ in messages.Inbound }
	// routerStarted: Router → Gateway, at every (re)start; the Gateway answers connectorsReady
	// once its Connectors are spawned (at once, after a restart).
	routerStarted   struct{}
	connectorsReady struct{}
	sessionIdle     struct{ key string } // Session → Router: no run, nothing queued
	sessionBusy     struct{ key string } // Session → Router: a run started
	sweep           struct{}
	liveSessions    struct{ reply chan<- int }
	liveSessionKeys struct{ reply chan<- []string }
	// sessionCounts asks for the live sessions and the Session actors not yet terminated.
	sessionCounts struct{ reply chan<- [2]int }
)

// RouterProps is the recipe for the Router. Its Sessions find the Connectors through Deps
// (Deps.connector: the channels the live settings run).
func RouterProps(deps *Deps, storage *actor.PID) *actor.Props {
	log := deps.Log.With().Str("actor", "router").Logger()
	return actor.PropsFromProducer(func() actor.Actor {
		return &Router{deps: deps, storage: storage, log: log}
	},
		actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(log)),
		actor.WithSupervisor(actor.NewOneForOneStrategy(3, time.Minute, actor.DefaultDecider)))
}

func (r *Router) Receive(ctx actor.Context) {
	var err error
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		err = r.onStarted(ctx)
	case *connectorsReady:
		r.onConnectorsReady(ctx)
	case *routeInbound:
		r.onRouteInbound(ctx, msg)
	case *messages.CancelRun:
		r.onCancelRun(ctx, msg) // cancel_cluster.go
	case *sessionAdmin:
		r.onSessionAdmin(ctx, msg) // session_admin.go
	case *messages.OutboundSent:
		r.forward(ctx, msg.SessionKey, msg)
	case *toolMessage:
		r.onToolMessage(ctx, msg)
	case *sessionsCall:
		r.onSessionsCall(ctx, msg)
	case *startSubagent:
		r.onStartSubagent(ctx, msg)
	case *subagentEnded:
		r.onSubagentEnded(ctx, msg)
	case *stopSubagent:
		r.onStopSubagent(ctx, msg)
	case *subagentMarked:
		r.forward(ctx, msg.parent, msg) // a parent not live reads it from the store
	case *archiveDue:
		r.onArchiveDue(ctx, msg)
	case *awaitReply:
		r.onAwaitReply(msg)
	case *forgetReply:
		delete(r.replies, msg.id)
	case *interReply:
		r.onInterReply(msg)
	case *sessionIdle:
		r.setIdleSince(msg.key, r.deps.now())
		r.unloadStateless(ctx, msg.key)
	case *sessionBusy:
		r.setIdleSince(msg.key, time.Time{})
	case *sweep:
		r.onSweep(ctx)
	case *idleConfirmed:
		r.onIdleConfirmed(ctx, msg)
	case *partitionsChanged:
		r.onPartitionsChanged(ctx) // cluster mode (router_cluster.go)
	case *inboxNotified:
		r.onInboxNotified(ctx, msg)
	case *clusterSweep:
		r.sweepPending(ctx)
	case *pendingFound:
		r.onPendingFound(ctx, msg)
	case *liveSessions:
		msg.reply <- len(r.sessions)
	case *liveSessionKeys:
		msg.reply <- slices.Sorted(maps.Keys(r.sessions))
	case *sessionCounts:
		msg.reply <- [2]int{len(r.sessions), len(r.byPID)}
	case *actor.Terminated:
		r.onTerminated(ctx, msg)
	case *actor.Stopping, *actor.Restarting:
		// Restarting too: protoactor stops the Sessions before the next instance starts,
		// and handles their Terminated here meanwhile; a Session spawned now (a freed
		// sub-agent slot) would never be stopped, and the restart would wait for it forever.
		r.stopping = true
		r.stop()
	}
	if err != nil {
		r.log.Error().Err(err).Str("msg", fmt.Sprintf("%T", ctx.Message())).Msg("router")
	}
}

// forward sends msg to the live Session for key, and reports false when none is live.
func (r *Router) forward(ctx actor.Context, key string, msg any) bool {
	rt := r.sessions[key]
	if rt == nil {
		return false
	}
	ctx.Send(rt.pid, msg)
	return true
}

// onToolMessage forwards a message tool's request to its Session, or answers that the
// session is not running.
func (r *Router) onToolMessage(ctx actor.Context, msg *toolMessage) {
	if !r.forward(ctx, msg.key, msg) {
		msg.reply <- fmt.Errorf("session %s is not running", msg.key)
	}
}

// setIdleSince notes when the Session for key reported idle (zero: busy).
func (r *Router) setIdleSince(key string, at time.Time) {
	if rt := r.sessions[key]; rt != nil {
		rt.idleSince = at
	}
}

// unloadStateless unloads a stateless session (sessionkey.IsStateless) as soon as it is idle:
// its run is over and its record deleted, so nothing will come for it again.
func (r *Router) unloadStateless(ctx actor.Context, key string) {
	if rt := r.sessions[key]; rt != nil && sessionkey.IsStateless(key) {
		r.checkIdle(ctx, rt)
	}
}

func (r *Router) stop() {
	if r.stopTicker != nil {
		r.stopTicker()
		r.stopTicker = nil
	}
	if r.stopClusterTicker != nil {
		r.stopClusterTicker()
		r.stopClusterTicker = nil
	}
}

func (r *Router) onRouteInbound(ctx actor.Context, msg *routeInbound) {
	if r.stopping && r.sessions[msg.in.SessionKey] == nil {
		return
	}
	if !r.owns(msg.in.SessionKey) {
		return // stored in its inbox: the owner's Router hears of it (router_cluster.go)
	}
	if msg.in.InboxSeq != 0 && r.waitsForSlot(msg.in.SessionKey) {
		r.hold(msg.in.SessionKey, &msg.in) // stored in its inbox: the child gets it with its slot
		return
	}
	rt := r.session(ctx, msg.in.SessionKey)
	rt.forwarded++
	rt.idleSince = time.Time{}
	in := msg.in
	ctx.Send(rt.pid, &in)
}

// session returns the live route for key, spawning its Session if needed.
func (r *Router) session(ctx actor.Context, key string) *route {
	if rt := r.sessions[key]; rt != nil {
		return rt
	}
	r.spawned++
	pid, err := ctx.SpawnNamed(r.props, sessionName(key, r.spawned))
	for err != nil { // a restarted Router counts from 0 again while old names may linger
		r.spawned += 1 << 20
		pid, err = ctx.SpawnNamed(r.props, sessionName(key, r.spawned))
	}
	rt := &route{pid: pid}
	r.sessions[key] = rt
	r.byPID[pid.Id] = key
	r.high = max(r.high, len(r.byPID))
	return rt
}

func (r *Router) onTerminated(ctx actor.Context, msg *actor.Terminated) {
	key, ok := r.byPID[msg.Who.Id]
	if !ok {
		return
	}
	delete(r.byPID, msg.Who.Id)
	if rt := r.sessions[key]; rt != nil && rt.pid.Id == msg.Who.Id {
		delete(r.sessions, key)
		r.releaseSubagent(ctx, key)
	}
	r.compact()
}
