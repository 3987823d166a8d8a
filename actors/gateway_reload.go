package actors

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
)

// A reload (cmd/reef builds the new Settings from the edited reef.yaml) reaches the tree as
// one message to the Gateway, which swaps the live snapshot and then does what the snapshot
// alone cannot: it stops the Connectors of removed or changed channel accounts, spawns those
// of added ones (a changed account's once its old Connector has terminated, under the same
// name), and tells the Connectors it keeps and the Timer to re-read their settings. No
// Session or run is stopped: each reads the agent and its settings afresh at its next run.

// reloadRequest asks the Gateway to apply next; reply gets nil when it is applied.
type reloadRequest struct {
	next  *Settings
	reply chan error
}

// Reload applies new live settings: agents, routes, channels and their access, streaming and
// guest tools, session, approvals, media and Timer settings. A channel account whose Channel
// value is the same as before keeps its Connector (and its connection); a different value
// (cmd/reef builds a new one when the account's platform settings changed) replaces it.
func (rt *Runtime) Reload(next Settings) error {
	if len(next.Agents) == 0 {
		return errors.New("actors: reload without an agent")
	}
	reply := make(chan error, 1)
	rt.system.Root.Send(rt.gateway, &reloadRequest{next: newSettings(next), reply: reply})
	select {
	case err := <-reply:
		return err
	case <-time.After(10 * time.Second):
		return errors.New("actors: the gateway did not apply the reload within 10s")
	}
}

// Settings returns the live settings.
func (rt *Runtime) Settings() Settings { return *rt.deps.live() }

func (g *Gateway) onReload(ctx actor.Context, msg *reloadRequest) {
	if g.draining != nil {
		msg.reply <- errors.New("reef is shutting down")
		return
	}
	old, next := g.deps.live(), msg.next
	// A removed account's rules stay: its Connector may still take a message while it stops
	// (no rules would admit everyone), and its sessions' waiting messages keep their owner.
	next.Access, next.ToolGrants = keepRemoved(old.Access, next.Access), keepRemoved(old.ToolGrants, next.ToolGrants)
	g.deps.current.Store(next)
	for _, name := range slices.Sorted(maps.Keys(g.connectors)) {
		pid := g.connectors[name]
		if next.Channels[name] == old.Channels[name] {
			ctx.Send(pid, &settingsChanged{}) // access and streaming are read from the snapshot
			continue
		}
		g.log.Info().Str("channel", name).Msg("reload: stopping the connector")
		delete(g.connectors, name)
		g.stopping[pid.Id] = name
		ctx.Stop(pid)
	}
	for _, name := range slices.Sorted(maps.Keys(next.Channels)) {
		if g.connectors[name] == nil && !g.isStopping(name) {
			g.spawnConnector(ctx, name, next.Channels[name])
		}
	}
	ctx.Send(timerPID(ctx.Self()), &settingsChanged{})
	msg.reply <- nil
}

// onConnectorStopped spawns the new Connector of a channel account a reload changed, once
// the old one has terminated and freed its name.
func (g *Gateway) onConnectorStopped(ctx actor.Context, who *actor.PID) {
	name, ok := g.stopping[who.Id]
	if !ok {
		return
	}
	delete(g.stopping, who.Id)
	if ch := g.deps.live().Channels[name]; ch != nil && g.connectors[name] == nil && !g.isStopping(name) {
		g.spawnConnector(ctx, name, ch)
	}
}

func (g *Gateway) isStopping(name string) bool {
	for _, n := range g.stopping {
		if n == name {
			return true
		}
	}
	return false
}

func (g *Gateway) spawnConnector(ctx actor.Context, name string, ch channels.Channel) {
	pid, err := ctx.SpawnNamed(ConnectorProps(name, ch, g.deps, g.storage, g.router), connectorName(name))
	if err != nil {
		g.log.Error().Err(err).Str("channel", name).Msg("start connector")
		return
	}
	g.connectors[name] = pid
}

// keepRemoved returns next with the entries of old whose keys next lacks.
func keepRemoved[V any](old, next map[string]V) map[string]V {
	out := maps.Clone(next)
	if out == nil {
		out = map[string]V{}
	}
	for k, v := range old {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}
