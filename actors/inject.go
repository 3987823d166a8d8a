package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// enqueue puts in (with SessionKey set) durably into its session's inbox, then routes it,
// exactly as a Connector does for a platform message but without access checks: it is for
// events reef raises itself (cron jobs, heartbeats). apply, when set, runs in the same
// transaction (a Timer records the run there, so a restart never runs it twice).
func enqueue(ctx context.Context, root *actor.RootContext, storage, router *actor.PID, in messages.Inbound,
	apply func(persistence.Tx) error) error {
	if in.SessionKey == "" {
		return fmt.Errorf("enqueue: no session key")
	}
	err := writeAndWait(ctx, root, storage, func(tx persistence.Tx) error {
		if apply != nil {
			if err := apply(tx); err != nil {
				return err
			}
		}
		seq, err := tx.AppendInbox(in.SessionKey, in)
		in.InboxSeq = seq
		return err
	})
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	root.Send(router, &routeInbound{in: in})
	return nil
}
