package actors

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// A run is shown on the platform (the draft that its reply will replace, and the typing
// indicator) only when it has gone on for showDelay. Quick answers need neither: the reply
// makes its own draft when there is none (deliverByEdit), so it costs the same calls and the
// user sees the answer as fast. And in a burst of messages the model requests go out first:
// the draft and typing calls of a thousand runs no longer stand between the later messages
// and the model. Half a second is below what a person notices as "no reaction" on a phone.
const showDelay = 500 * time.Millisecond

// showRun is a started run waiting to be shown: the Connector's self-message when showDelay
// has passed, and then a job of its chat's queue.
type showRun struct {
	ev   *messages.TurnEvent
	stop func() bool // cancels the pending wake-up
}

// showKey is the key of a run in Connector.unseen: its session and chat.
func showKey(session, chat string) string { return session + "\x00" + chat }

// onTurnEvent queues a run's progress for its chat; a run's start waits for showDelay.
func (c *Connector) onTurnEvent(ctx actor.Context, ev *messages.TurnEvent) {
	switch ev.Kind {
	case messages.TurnStarted:
		key := showKey(ev.SessionKey, ev.ChatID)
		if old := c.unseen[key]; old != nil {
			old.stop()
		}
		sr := &showRun{ev: ev}
		self, root := ctx.Self(), ctx.ActorSystem().Root
		sr.stop = c.deps.clock().AfterFunc(showDelay, func() { root.Send(self, sr) })
		c.unseen[key] = sr
	case messages.TurnFinal:
		c.forgetUnseen(ev.SessionKey, ev.ChatID)
	}
	c.enqueue(ctx, ev.ChatID, ev)
}

// onOutbound queues a reply. A reply of the run (not a direct one such as a /status answer)
// makes its own draft, so the run no longer needs showing.
func (c *Connector) onOutbound(ctx actor.Context, out *messages.Outbound) {
	if !out.Direct {
		c.forgetUnseen(out.SessionKey, out.ChatID)
	}
	c.enqueue(ctx, out.ChatID, out)
}

// onShowDue queues the showing of a run that is still going after showDelay.
func (c *Connector) onShowDue(ctx actor.Context, sr *showRun) {
	key := showKey(sr.ev.SessionKey, sr.ev.ChatID)
	if c.unseen[key] != sr {
		return // answered, finished or replaced by a newer run meanwhile
	}
	delete(c.unseen, key)
	c.enqueue(ctx, sr.ev.ChatID, sr)
}

func (c *Connector) forgetUnseen(session, chat string) {
	key := showKey(session, chat)
	if sr := c.unseen[key]; sr != nil {
		sr.stop()
		delete(c.unseen, key)
	}
}

// show puts a run on the platform: its draft and the typing indicator.
func (c *Connector) show(ctx context.Context, root *actor.RootContext, ev *messages.TurnEvent) {
	c.openDraft(ctx, root, ev)
	if t, ok := c.ch.(channels.Typer); ok {
		if err := t.Typing(ctx, ev.ChatID); err != nil {
			c.log.Debug().Err(err).Msg("typing")
		}
	}
}
