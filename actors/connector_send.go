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
	if !c.hold(out) {
		c.log.Debug().Str("session", out.SessionKey).Uint64("outboxSeq", out.OutboxSeq).Msg("reply already in hand")
		return
	}
	if !out.Direct {
		c.forgetRun(out.SessionKey, out.ChatID)
		c.dropLive(out.SessionKey, out.ChatID)
	}
	c.enqueue(ctx, out.ChatID, out)
}

// enqueue adds a reply or progress event to its chat's queue. Jobs of one chat run one at a
// time, in order; different chats run concurrently. A chat waiting for the platform keeps
// its replies and runs' ends, and drops what only shows a run's progress.
func (c *Connector) enqueue(ctx actor.Context, chat string, job any) {
	if c.waits(chat) && !lasting(job) {
		return
	}
	c.queues[chat] = append(c.queues[chat], job)
	c.next(ctx, chat)
}

// lasting reports whether a job must still run after the platform was away: a reply, or a
// run's end (it removes a draft no reply consumed).
func lasting(job any) bool {
	switch job := job.(type) {
	case *messages.Outbound:
		return true
	case *messages.TurnEvent:
		return job.Kind == messages.TurnFinal
	case *messageOp:
		return true // a tool waits for its answer
	}
	return false
}

// onJobDone starts the next job of a chat whose job finished. A reply the platform did not
// take makes the chat wait (park); one it took shows the platform is there, so the chats
// waiting for it are tried again.
func (c *Connector) onJobDone(ctx actor.Context, msg *jobDone) {
	c.busy[msg.chat] = false
	if msg.out != nil {
		if msg.retry {
			c.park(ctx, msg.chat, msg.out, msg.err)
			return
		}
		c.sent(msg.chat, msg.out)
		c.release(ctx, msg.out, msg.err)
		if msg.moved {
			// Not done with: should the session come back to this node (its partition taken
			// again, after a storage outage or a pause), the reply it sends again goes out.
			delete(c.done, outKey(msg.out))
		}
		c.flush(ctx)
		if msg.err == nil {
			select { // the platform is there: a platform loop waiting to reconnect goes now
			case c.wakeRun <- struct{}{}:
			default:
			}
		}
	}
	c.next(ctx, msg.chat)
}

// next starts the chat's next job unless one is running.
func (c *Connector) next(ctx actor.Context, chat string) {
	q := c.queues[chat]
	if c.busy[chat] || c.waits(chat) {
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
		done := &jobDone{chat: chat}
		defer func() {
			if r := recover(); r != nil {
				c.log.Error().Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("send panicked")
				if done.out != nil {
					done.err, done.retry = fmt.Errorf("send panicked: %v", r), true
				}
			}
			root.Send(self, done)
		}()
		switch job := job.(type) {
		case *messages.Outbound:
			done.out = job
			done.retry, done.err = c.send(runCtx, root, job)
			if errors.Is(done.err, errMoved) {
				done.err, done.moved = nil, true
			}
		case *messages.TurnEvent:
			c.progress(runCtx, root, job)
		case *showJob:
			c.show(runCtx, root, job)
		case *editJob:
			c.editDraft(runCtx, root, job)
		case *typingJob:
			c.typing(runCtx, job.chat, job.thread)
		case *messageOp:
			c.runMessageOp(runCtx, root, job)
		case *dropJob:
			c.dropMessage(runCtx, job.d)
		}
	}()
}

// send delivers one reply and removes its outbox row. It reports retry for a failure that
// may pass (the platform unreachable, 5xx, a timeout): the reply stays in the outbox and the
// Connector tries it again (park). A reply the platform refuses for good is dropped.
func (c *Connector) send(ctx context.Context, root *actor.RootContext, out *messages.Outbound) (retry bool, err error) {
	c.waitForStorage(ctx, out) // cluster mode: not while the database is unreachable (storage_outage.go)
	if c.moved(out) {
		return false, errMoved
	}
	c.log.Debug().Str("session", out.SessionKey).Uint64("outboxSeq", out.OutboxSeq).Msg("sending a reply")
	var edited bool
	if !out.Direct {
		edited, err = c.deliverByEdit(ctx, root, out)
		if errors.Is(err, errMoved) {
			return false, err
		}
	}
	if !edited && err == nil {
		var ids []string
		ids, err = c.ch.Send(ctx, *out)
		c.journal.sent(ids)                          // known as reef's: no sweep takes it for a stray (connector_sweep.go)
		c.sentIDs.note(out.ChatID, outKey(out), ids) // for the message tool (connector_edit.go)
	} else if edited && err == nil && len(out.Media) > 0 { // the draft took the text; the files follow
		files := *out
		files.Text, files.ReplyToID, files.Quote = "", "", false
		var ids []string
		ids, err = c.ch.Send(ctx, files)
		c.journal.sent(ids)
	}
	if errors.Is(err, channels.ErrPermanent) {
		c.log.Warn().Err(err).Str("chat", out.ChatID).Msg("reply refused by the platform; dropped")
		c.sentIDs.refused(outKey(out), err) // a message tool's send reports it (connector_edit.go)
	} else if err != nil {
		return true, err
	}
	if out.OutboxSeq == 0 {
		return false, err
	}
	var sent []string // kept in the store in cluster mode, for the message tool on other nodes
	if c.deps.Cluster != nil && err == nil {
		sent = c.sentIDs.peek(outKey(out))
	}
	if werr := c.markSent(ctx, root, out, sent); werr != nil {
		c.log.Error().Err(werr).Str("session", out.SessionKey).Msg("mark reply sent; it may be sent again after a restart")
		return false, werr
	}
	return false, err
}

// errMoved stops a reply's delivery whose session moved to another node (Connector.moved).
var errMoved = errors.New("the session moved to another node")

// moved reports, in cluster mode, that out's session is no longer this node's (its partition
// moved, or this node was frozen past its lease): the reply stays in the outbox and the new
// owner delivers it. Checked before each platform call of a delivery, so a node that wakes
// from a freeze between two of them goes no further.
func (c *Connector) moved(out *messages.Outbound) bool {
	if out.OutboxSeq == 0 || c.deps.Cluster == nil {
		return false
	}
	if _, ok := c.deps.Cluster.Owns(out.SessionKey); ok {
		return false
	}
	c.log.Info().Str("session", out.SessionKey).Uint64("outboxSeq", out.OutboxSeq).Msg("reply left to the session's new owner")
	return true
}

// markSent deletes a sent reply's outbox row (and the record of the draft that holds it). While that write
// fails (a full disk) it tries again, after 1 s doubling up to a minute, for as long as the
// Connector runs: a row left behind would be sent again after a restart. The chat's later
// replies wait meanwhile.
func (c *Connector) markSent(ctx context.Context, root *actor.RootContext, out *messages.Outbound, sent []string) error {
	key := out.SessionKey
	delay := time.Second
	for {
		err := c.markOnce(root, out, sent)
		if err == nil || ctx.Err() != nil {
			return err
		}
		c.log.Error().Err(err).Str("session", key).Str("retry", delay.Round(time.Millisecond).String()).Msg("could not mark a reply sent; trying again")
		wake := make(chan struct{})
		stop := c.deps.clock().AfterFunc(delay, func() { close(wake) })
		select {
		case <-wake:
		case <-ctx.Done():
			stop()
			return err
		}
		delay = min(2*delay, time.Minute)
	}
}

// markOnce writes the deletion of a sent reply's outbox row (with the ids sent, in cluster
// mode: connector_sent_cluster.go) and waits for the commit, so that a clean shutdown stops
// Storage only after it.
func (c *Connector) markOnce(root *actor.RootContext, out *messages.Outbound, sent []string) error {
	key, seq, direct, name, chat := out.SessionKey, out.OutboxSeq, out.Direct, c.name, out.ChatID
	done := make(chan error, 1)
	root.Send(c.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			if len(sent) > 0 {
				if err := rememberSent(tx, name, chat, sent); err != nil {
					return err
				}
			}
			if err := tx.DeleteOutbox(key, seq); err != nil || direct {
				return err
			}
			return tx.Delete(draftBucket, draftRecordKey(key, seq)) // the draft that holds it, if any
		},
		Done: func(err error) { done <- err },
	})
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(sendGrace):
			if !c.deps.storage.down() {
				return errors.New("storage did not answer")
			}
			// The database is unreachable: Storage holds the write and commits it when the
			// database is back (storage_outage.go); the chat's later replies wait behind it.
		}
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
