package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/sessionkey"
)

// Cluster mode (Deps.Cluster): the Router runs Sessions only for the partitions this node
// holds. Inbound messages accepted on any node are in the shared inbox; the owner's Router
// learns of them by a notification (Runtime.InboxNotified, from the database's LISTEN) or
// by its sweep (clusterSweepEvery), and runs them: it spawns the Session, which loads its
// inbox, or tells a live one to read it again (inboxChanged). When the node gains partitions
// (Runtime.PartitionsChanged) the Router spawns their sessions with pending work, as after
// a restart; when it loses some it stops their Sessions at once: what they would still
// write is fenced (storage_fence.go), and the new owner runs them from the store.

// clusterSweepEvery is how often the Router looks for owned sessions with pending work a
// lost notification left waiting.
const clusterSweepEvery = 3 * time.Second

// Cluster messages of the Router.
type (
	partitionsChanged struct{}                // the node gained or lost partitions
	inboxNotified     struct{ key string }    // an inbox entry of key was committed; "": sweep
	clusterSweep      struct{}                // the sweep's tick
	pendingFound      struct{ keys []string } // the sweep's read of the store
)

// owns reports whether this node runs key's session: always on a single node; a stateless
// API session runs where its request is (nothing else writes it).
func (r *Router) owns(key string) bool {
	if r.deps.Cluster == nil || sessionkey.IsStateless(key) {
		return true
	}
	_, ok := r.deps.Cluster.Owns(key)
	return ok
}

// onPartitionsChanged stops the Sessions of partitions this node lost and sweeps for those
// of the partitions it gained.
func (r *Router) onPartitionsChanged(ctx actor.Context) {
	stopped := 0
	for key, rt := range r.sessions {
		if r.owns(key) {
			continue
		}
		ctx.Stop(rt.pid) // its Terminated frees the sub-agent slot (onTerminated)
		delete(r.sessions, key)
		stopped++
	}
	if stopped > 0 {
		r.log.Info().Int("sessions", stopped).Msg("cluster: stopped the sessions of partitions this node no longer holds")
	}
	r.sweepPending(ctx)
}

// onInboxNotified runs the session of key if this node owns it.
func (r *Router) onInboxNotified(ctx actor.Context, msg *inboxNotified) {
	if msg.key == "" {
		r.sweepPending(ctx)
		return
	}
	r.wake(ctx, msg.key)
}

// wake runs an owned session that has pending work: a live one reads its inbox again, one
// not live is spawned (a sub-agent through the gate).
func (r *Router) wake(ctx actor.Context, key string) {
	if r.stopping || r.recovery != nil || !r.owns(key) || sessionkey.IsStateless(key) {
		return
	}
	if rt := r.sessions[key]; rt != nil {
		rt.forwarded++ // the passivation handshake counts it as a message sent
		rt.idleSince = time.Time{}
		ctx.Send(rt.pid, &inboxChanged{})
		return
	}
	if r.waitsForSlot(key) {
		return // its messages wait in its inbox until it gets its slot
	}
	if isSubagentKey(key) {
		r.onStartSubagent(ctx, &startSubagent{key: key})
		return
	}
	r.session(ctx, key)
}

// sweepPending reads the sessions with pending work in a goroutine (one at a time), and
// wakes the owned ones when it answers (pendingFound).
func (r *Router) sweepPending(ctx actor.Context) {
	if r.deps.Cluster == nil || r.sweeping || r.stopping {
		return
	}
	r.sweeping = true
	self, root, store := ctx.Self(), ctx.ActorSystem().Root, r.deps.Store
	go func() {
		var keys []string
		err := store.View(func(rd persistence.Reader) error {
			var err error
			keys, err = rd.PendingSessions()
			return err
		})
		if err != nil {
			keys = nil // the next sweep tries again
		}
		root.Send(self, &pendingFound{keys: keys})
	}()
}

func (r *Router) onPendingFound(ctx actor.Context, msg *pendingFound) {
	r.sweeping = false
	for _, key := range msg.keys {
		r.wake(ctx, key)
	}
}

// startClusterSweep starts the sweep's ticker (at connectorsReady) and sweeps at once.
func (r *Router) startClusterSweep(ctx actor.Context) {
	if r.deps.Cluster == nil {
		return
	}
	r.stopClusterTicker = tickSelf(ctx, clusterSweepEvery, &clusterSweep{})
	r.sweepPending(ctx)
}
