package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Gateway is the root of reef's actor tree. It starts Storage, the Router and one Connector per
// channel, restarts them with backoff when they fail, and stops them all when it is poisoned.
type Gateway struct {
	deps    *Deps
	ready   chan<- *Runtime
	stopped chan<- struct{}
	log     zerolog.Logger

	storage    *actor.PID
	router     *actor.PID
	connectors map[string]*actor.PID // the running Connectors by channel ID
	stopping   map[string]string     // Connectors a reload stopped: pid id → channel ID (gateway_reload.go)
	draining   map[string]bool       // children still stopping before Storage may stop
}

// shutdown asks the Gateway to stop the tree in order: Connectors and the Router (with every
// Session and Turn) first, so that their last writes reach Storage, then Storage, then itself.
type shutdown struct{}

// GatewayProps is the recipe for the Gateway; ready receives the running tree's handle.
func gatewayProps(deps *Deps, ready chan<- *Runtime, stopped chan<- struct{}) *actor.Props {
	log := deps.Log.With().Str("actor", "gateway").Logger()
	return actor.PropsFromProducer(func() actor.Actor {
		return &Gateway{deps: deps, ready: ready, stopped: stopped, log: log}
	},
		actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(log)),
		actor.WithSupervisor(actor.NewExponentialBackoffStrategy(time.Minute, 500*time.Millisecond)))
}

func (g *Gateway) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		g.onStarted(ctx)
	case *routerStarted:
		g.onRouterStarted(ctx)
	case *shutdown:
		g.onShutdown(ctx)
	case *reloadRequest:
		g.onReload(ctx, msg) // gateway_reload.go
	case *actor.Terminated:
		g.onTerminated(ctx, msg)
	case *actor.Stopped:
		close(g.stopped)
	}
}

// connectorName is the actor name of the Connector of a channel ID.
func connectorName(channel string) string { return "connector-" + channel }

// onRouterStarted answers a Router that (re)started: the Connectors are spawned, it may
// respawn the sessions with pending work. A Router restarted during shutdown is not told:
// it is being stopped, and what it would start waits in the store.
func (g *Gateway) onRouterStarted(ctx actor.Context) {
	if g.draining != nil {
		return
	}
	ctx.Respond(&connectorsReady{})
}

func (g *Gateway) onShutdown(ctx actor.Context) {
	if g.draining != nil {
		return
	}
	g.draining = map[string]bool{}
	for _, pid := range ctx.Children() {
		if pid.Id != g.storage.Id {
			g.draining[pid.Id] = true
			ctx.Stop(pid)
		}
	}
	g.maybeStopStorage(ctx)
}

func (g *Gateway) onTerminated(ctx actor.Context, msg *actor.Terminated) {
	if g.draining == nil {
		g.onConnectorStopped(ctx, msg.Who) // gateway_reload.go
		return
	}
	if msg.Who.Id == g.storage.Id {
		ctx.Stop(ctx.Self())
		return
	}
	delete(g.draining, msg.Who.Id)
	g.maybeStopStorage(ctx)
}

func (g *Gateway) maybeStopStorage(ctx actor.Context) {
	if len(g.draining) == 0 {
		ctx.Stop(g.storage)
	}
}

func (g *Gateway) onStarted(ctx actor.Context) {
	storage, _ := ctx.SpawnNamed(storageProps(g.deps.Store, g.deps.Cluster, &g.deps.storage, g.deps.Log), "storage")
	g.storage = storage
	// Approvals starts before the Router: a resumed run's ask must find the requests loaded.
	approvals, err := ctx.SpawnNamed(ApprovalsProps(g.deps, storage), "approvals")
	if err != nil {
		g.log.Error().Err(err).Msg("start approvals")
	}
	g.deps.approvals = approvals
	// Tools reach the Timer through toolRuntime; its PID is known before it is spawned.
	g.deps.timer = timerPID(ctx.Self())
	g.deps.gateway = ctx.Self()
	router := actor.NewPID(ctx.Self().Address, ctx.Self().Id+"/router")
	g.deps.toolRuntime = &toolsRuntime{root: ctx.ActorSystem().Root, timer: g.deps.timer, router: router, store: g.deps.Store}
	// The Connectors are spawned after the Router (they send to it); Sessions find them by
	// name (Deps.connector).
	router, _ = ctx.SpawnNamed(RouterProps(g.deps, storage), "router")
	if _, err := ctx.SpawnNamed(TimerProps(g.deps, storage, router), "timer"); err != nil {
		g.log.Error().Err(err).Msg("start timer")
	}
	g.router = router
	g.connectors, g.stopping = map[string]*actor.PID{}, map[string]string{}
	chans := g.deps.live().Channels
	for _, name := range slices.Sorted(maps.Keys(chans)) {
		g.spawnConnector(ctx, name, chans[name])
	}
	// The Router's routerStarted waits in the mailbox until this handler ends: every
	// Connector is spawned when it is answered (onRouterStarted).
	if g.ready != nil {
		g.ready <- &Runtime{deps: g.deps, system: ctx.ActorSystem(), gateway: ctx.Self(), router: router, storage: storage}
		g.ready = nil
	}
}

// Runtime is a running actor tree.
type Runtime struct {
	deps    *Deps
	system  *actor.ActorSystem
	gateway *actor.PID
	router  *actor.PID
	storage *actor.PID
	stopped <-chan struct{}
}

// StartOption adjusts how Start builds the tree.
type StartOption func(*startOptions)

type startOptions struct{ timer TimerSettings }

// WithTimer configures the Timer (heartbeats per agent, cron limits).
func WithTimer(s TimerSettings) StartOption { return func(o *startOptions) { o.timer = s } }

// Start validates deps and starts the actor tree.
func Start(deps *Deps, opts ...StartOption) (*Runtime, error) {
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	if deps.Store == nil {
		return nil, errors.New("actors: no store")
	}
	if len(deps.Agents) == 0 {
		return nil, errors.New("actors: no agent")
	}
	deps.started = deps.now()
	deps.storage.watch(deps.Store) // storage_outage.go
	deps.current.Store(settingsOf(deps, o.timer))
	system := actor.NewActorSystemWithConfig(SystemConfig(deps.Log))
	ready := make(chan *Runtime, 1)
	stopped := make(chan struct{})
	if _, err := system.Root.SpawnNamed(gatewayProps(deps, ready, stopped), "gateway"); err != nil {
		return nil, fmt.Errorf("actors: start gateway: %w", err)
	}
	select {
	case rt := <-ready:
		rt.stopped = stopped
		return rt, nil
	case <-time.After(10 * time.Second):
		return nil, errors.New("actors: gateway did not start within 10s")
	}
}

// Cancel stops the current run of a session, if any.
func (rt *Runtime) Cancel(sessionKey string) {
	rt.system.Root.Send(rt.router, &messages.CancelRun{SessionKey: sessionKey})
}

// LiveSessions returns how many Session actors are alive.
func (rt *Runtime) LiveSessions() int {
	reply := make(chan int, 1)
	rt.system.Root.Send(rt.router, &liveSessions{reply: reply})
	select {
	case n := <-reply:
		return n
	case <-time.After(5 * time.Second):
		return -1
	}
}

// LiveSessionKeys returns the keys of the sessions in memory (nil if the Router does not answer).
func (rt *Runtime) LiveSessionKeys() []string {
	reply := make(chan []string, 1)
	rt.system.Root.Send(rt.router, &liveSessionKeys{reply: reply})
	select {
	case keys := <-reply:
		return keys
	case <-time.After(5 * time.Second):
		return nil
	}
}

// HasTool reports whether the agent has a tool of that name (the OpenAI-compatible API
// refuses a client tool named like one).
func (rt *Runtime) HasTool(agentID, name string) bool {
	for _, a := range rt.deps.Agents {
		if a.ID == agentID && a.Tools != nil {
			return a.Tools.Has(name)
		}
	}
	return false
}

// Sweep asks the Router to passivate idle sessions now (tests and benchmarks).
func (rt *Runtime) Sweep() { rt.system.Root.Send(rt.router, &sweep{}) }

// PartitionsChanged tells the Router that this cluster node gained or lost partitions
// (internal/cluster.Node's OnChange): it stops the sessions it no longer owns and starts the
// pending ones it now owns (router_cluster.go).
func (rt *Runtime) PartitionsChanged() { rt.system.Root.Send(rt.router, &partitionsChanged{}) }

// InboxNotified tells the Router that an inbox entry of key was committed, on any node
// (the database's notification); "" asks it to sweep for pending sessions it owns.
func (rt *Runtime) InboxNotified(key string) {
	rt.system.Root.Send(rt.router, &inboxNotified{key: key})
}

// Stop shuts the tree down in order (see shutdown) and waits up to timeout.
func (rt *Runtime) Stop(timeout time.Duration) error {
	rt.system.Root.Send(rt.gateway, &shutdown{})
	select {
	case <-rt.stopped:
		rt.system.Shutdown()
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("actors: gateway did not stop within %s", timeout)
	}
}

// Write applies fn in a durable transaction through Storage (for commands that change state
// while the gateway runs, such as approving a pairing request).
func (rt *Runtime) Write(ctx context.Context, fn func(persistence.Tx) error) error {
	return writeAndWait(ctx, rt.system.Root, rt.storage, fn)
}

// Health returns the state of every channel connector.
func (rt *Runtime) Health() []ChannelHealth {
	var out []ChannelHealth
	for name := range rt.deps.live().Channels {
		pid := connectorPID(rt.gateway, name)
		reply := make(chan ChannelHealth, 1)
		rt.system.Root.Send(pid, &healthRequest{reply: reply})
		select {
		case h := <-reply:
			out = append(out, h)
		case <-time.After(2 * time.Second):
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// HeartbeatPauses returns, per agent, why its heartbeats are paused (none: an empty map).
func (rt *Runtime) HeartbeatPauses() map[string]string {
	reply := make(chan map[string]string, 1)
	rt.system.Root.Send(timerPID(rt.gateway), &beatPausesRequest{reply: reply})
	select {
	case m := <-reply:
		return m
	case <-time.After(2 * time.Second):
		return nil
	}
}
