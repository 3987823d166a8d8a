package actors

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// onOutbound queues a reply. A reply of the run (not a direct one such as a /status answer)
// makes its own draft, so the run no longer needs showing; and a message sent ends the
// platform's typing indicator, so it is not sent again either.
func (c *Connector) onOutbound(ctx actor.Context, out *messages.Outbound) {
	if !out.Direct {
		c.forgetRun(out.SessionKey, out.ChatID)
	}
	c.enqueue(ctx, out.ChatID, out)
}

// enqueue adds a reply or progress event to its chat's queue. Jobs of one chat run one at a
// time, in order; different chats run concurrently.
func (c *Connector) enqueue(ctx actor.Context, chat string, job any) {
	c.queues[chat] = append(c.queues[chat], job)
	c.next(ctx, chat)
}

// onJobDone starts the next job of a chat whose job finished.
func (c *Connector) onJobDone(ctx actor.Context, msg *jobDone) {
	c.busy[msg.chat] = false
	c.next(ctx, msg.chat)
}

// next starts the chat's next job unless one is running.
func (c *Connector) next(ctx actor.Context, chat string) {
	q := c.queues[chat]
	if c.busy[chat] {
		return
	}
	if len(q) == 0 {
		delete(c.queues, chat)
		delete(c.busy, chat)
		return
	}
	job := q[0]
	q[0] = nil
	c.queues[chat] = q[1:]
	c.busy[chat] = true
	self, root := ctx.Self(), ctx.ActorSystem().Root
	runCtx := c.runCtx
	c.sends.Add(1)
	go func() {
		defer c.sends.Done()
		defer func() {
			if r := recover(); r != nil {
				c.log.Error().Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("send panicked")
			}
			root.Send(self, &jobDone{chat: chat})
		}()
		switch job := job.(type) {
		case *messages.Outbound:
			c.send(runCtx, root, job)
		case *messages.TurnEvent:
			c.progress(runCtx, root, job)
		case *showRun:
			c.show(runCtx, root, job.ev)
		case *typingJob:
			c.typing(runCtx, job.chat)
		}
	}()
}

// send delivers one reply, retrying transient failures, then removes its outbox row. A reply
// that cannot be sent stays in the outbox and is sent again when reef restarts.
func (c *Connector) send(ctx context.Context, root *actor.RootContext, out *messages.Outbound) {
	var err error
	for attempt, wait := 0, time.Second; attempt < 4; attempt, wait = attempt+1, wait*2 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		var edited bool
		if !out.Direct {
			edited, err = c.deliverByEdit(ctx, root, out)
		}
		if !edited && err == nil {
			_, err = c.ch.Send(ctx, *out)
		}
		if err == nil || ctx.Err() != nil || errors.Is(err, channels.ErrPermanent) {
			break
		}
		c.log.Warn().Err(err).Str("chat", out.ChatID).Int("attempt", attempt+1).Msg("send failed")
	}
	if errors.Is(err, channels.ErrPermanent) {
		c.log.Warn().Err(err).Str("chat", out.ChatID).Msg("reply refused by the platform; dropped")
	} else if err != nil {
		c.log.Error().Err(err).Str("chat", out.ChatID).Msg("reply not sent; it stays in the outbox")
		c.confirm(root, out, err)
		return
	}
	if out.OutboxSeq == 0 {
		return
	}
	defer func() { c.confirm(root, out, err) }()
	key, seq, direct := out.SessionKey, out.OutboxSeq, out.Direct
	done := make(chan error, 1)
	root.Send(c.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			if err := tx.DeleteOutbox(key, seq); err != nil || direct {
				return err
			}
			return tx.Delete(draftBucket, key) // consumed, or to be replaced by the next run's
		},
		Done: func(err error) { done <- err },
	})
	select { // wait, so that a clean shutdown stops Storage only after this commit
	case err = <-done:
	case <-time.After(sendGrace):
		err = errors.New("storage did not answer")
	}
	if err != nil {
		c.log.Error().Err(err).Str("session", key).Msg("mark reply sent; it may be sent again after a restart")
	}
}

func (c *Connector) progress(ctx context.Context, root *actor.RootContext, ev *messages.TurnEvent) {
	if ev.Kind == messages.TurnFinal {
		c.closeDraft(ctx, root, ev.SessionKey)
	}
	if r, ok := c.ch.(channels.ProgressRenderer); ok {
		r.Progress(ctx, *ev)
	}
}

// confirm tells the reply's Session that the Connector is done with it (sent, dropped, or
// left in the outbox for the next start): until then the Session is not passivated, since
// a respawned Session sends every reply its outbox still holds.
func (c *Connector) confirm(root *actor.RootContext, out *messages.Outbound, err error) {
	if out.OutboxSeq != 0 {
		root.Send(c.router, &messages.OutboundSent{SessionKey: out.SessionKey, OutboxSeq: out.OutboxSeq, Err: err})
	}
}
