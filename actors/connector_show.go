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
// A platform whose edits are scarce asks for longer (channels.ShowDelayer: Slack).
const showDelay = 500 * time.Millisecond

// While a shown run goes on, its typing indicator is sent again every typingEvery: Telegram
// shows one for 5 s, Discord for 10 s. typingFor bounds it, should a run's end never come.
const (
	typingEvery = 4 * time.Second
	typingFor   = 30 * time.Minute
)

// showRun is a started run: the Connector's self-message when showDelay has passed (then a
// job of its chat's queue), and again every typingEvery while it is shown.
type showRun struct {
	ev    *messages.TurnEvent
	stop  func() bool // cancels the pending wake-up
	shown time.Time   // zero until shown
}

// typingJob sends a typing action again (a job of its chat's queue), in the run's thread if any.
type typingJob struct{ chat, thread string }

// showKey is the key of a run in Connector.runs: its session and chat.
func showKey(session, chat string) string { return session + "\x00" + chat }

// onTurnEvent queues a run's progress for its chat; a run's start waits for showDelay.
func (c *Connector) onTurnEvent(ctx actor.Context, ev *messages.TurnEvent) {
	switch ev.Kind {
	case messages.TurnStarted:
		key := showKey(ev.SessionKey, ev.ChatID)
		if old := c.runs[key]; old != nil {
			old.stop()
		}
		sr := &showRun{ev: ev}
		c.wake(ctx, sr, c.showDelay())
		c.runs[key] = sr
		c.dropLive(ev.SessionKey, ev.ChatID)
		if lr := c.liveFor(ev); lr != nil {
			c.live[key] = lr
		}
	case messages.TurnFinal:
		c.forgetRun(ev.SessionKey, ev.ChatID)
		c.dropLive(ev.SessionKey, ev.ChatID)
	default:
		c.onLiveEvent(ctx, ev)
	}
	if _, ok := c.ch.(channels.ProgressRenderer); ok && ev.Kind != messages.TextStreamed || ev.Kind == messages.TurnFinal {
		c.enqueue(ctx, ev.ChatID, ev) // a run's end also takes away a draft no reply consumed
	}
}

// onShowDue queues the showing of a run that is still going after showDelay, and then a
// typing action every typingEvery while it goes on.
func (c *Connector) onShowDue(ctx actor.Context, sr *showRun) {
	key := showKey(sr.ev.SessionKey, sr.ev.ChatID)
	if c.runs[key] != sr {
		return // answered, finished or replaced by a newer run meanwhile
	}
	_, typer := c.ch.(channels.Typer)
	now := c.deps.now()
	switch {
	case sr.shown.IsZero():
		sr.shown = now
		c.enqueue(ctx, sr.ev.ChatID, c.showFirst(sr.ev))
	case now.Sub(sr.shown) < typingFor:
		c.enqueue(ctx, sr.ev.ChatID, &typingJob{chat: sr.ev.ChatID, thread: sr.ev.ThreadID})
	default:
		typer = false
	}
	if !typer {
		delete(c.runs, key)
		return
	}
	c.wake(ctx, sr, typingEvery)
}

// showDelay is how long a run goes on before it is shown: the account's startDelay, or
// longer where the platform asks (channels.ShowDelayer).
func (c *Connector) showDelay() time.Duration {
	if d, ok := c.ch.(channels.ShowDelayer); ok {
		return max(c.stream.StartDelay, d.ShowDelay())
	}
	return c.stream.StartDelay
}

// wake has the Connector sent sr after d.
func (c *Connector) wake(ctx actor.Context, sr *showRun, d time.Duration) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	sr.stop = c.deps.clock().AfterFunc(d, func() { root.Send(self, sr) })
}

func (c *Connector) forgetRun(session, chat string) {
	key := showKey(session, chat)
	if sr := c.runs[key]; sr != nil {
		sr.stop()
		delete(c.runs, key)
	}
}

// show puts a run on the platform: its draft (by the streaming mode) and the typing indicator.
func (c *Connector) show(ctx context.Context, root *actor.RootContext, job *showJob) {
	if job.draft {
		if id := c.openDraft(ctx, root, job.ev, job.text); id != "" {
			root.Send(c.self, &draftOpened{key: job.key, id: id, text: job.text, run: job.run})
		}
	}
	c.typing(ctx, job.ev.ChatID, job.ev.ThreadID)
}

// typing shows the typing indicator in chat (in its thread where the platform can), where
// the platform has one.
func (c *Connector) typing(ctx context.Context, chat, thread string) {
	var err error
	if tt, ok := c.ch.(channels.ThreadTyper); ok && thread != "" {
		err = tt.TypingInThread(ctx, chat, thread)
	} else if t, ok := c.ch.(channels.Typer); ok {
		err = t.Typing(ctx, chat)
	}
	if err != nil {
		c.log.Debug().Err(err).Msg("typing")
	}
}
