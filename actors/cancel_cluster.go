package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Runtime.Cancel (Ctrl-C in reef chat) in cluster mode, where the run may be on another
// node. A Router with no live Session for the key that does not own it either puts a cancel
// entry in the session's inbox; the Session on the node that runs it takes the entry without
// a run and stops its current run (takeHandover), as a /stop typed in the chat would. An
// entry older than cancelFresh stops nothing: the run it meant is long over.

const (
	cancelSource = "cancel"
	cancelFresh  = 30 * time.Second
)

// onCancelRun stops the session's current run, here or on the node that runs it.
func (r *Router) onCancelRun(ctx actor.Context, msg *messages.CancelRun) {
	key := msg.SessionKey
	if r.forward(ctx, key, msg) || r.owns(key) {
		return
	}
	in := messages.Inbound{System: true, Source: cancelSource, SessionKey: key, Time: r.deps.now()}
	log := r.log
	ctx.Send(r.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			_, err := tx.AppendInbox(key, in)
			return err
		},
		Done: func(err error) {
			if err != nil {
				log.Warn().Err(err).Str("session", key).Msg("could not pass a cancel to the node that runs the session")
			}
		},
	})
}
