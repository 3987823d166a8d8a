package actors

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/streaming"
)

// A shown run's draft follows the run by the account's streaming mode (package streaming):
// the Connector feeds the run's TurnEvents to a streaming.Draft and edits the platform's
// message into what it renders. Edits are coalesced, never queued: a run has at most one
// edit queued or waiting, which shows the draft as it is when the edit is made. They are
// paced under the platform's channels.EditLimits: per chat (from the end of the chat's last
// edit, so the platform sees them at least PerChat apart whatever the network does; the
// first waits PerChat after the draft was sent), per account (a token bucket of PerSecond,
// reserved in turn, so a burst of runs gets its edits spread out instead of refused), and
// per message (Feishu: a message takes 20 edits; the last two are kept for the answer). The
// answer never waits behind a progress edit: its arrival takes the run's queued edit away,
// and it waits only for the chat's PerChat after the last edit (editPacer.wait).

// progressEditTimeout bounds a progress edit: one the platform makes wait (a 429) is given
// up, not waited out ahead of the answer.
const progressEditTimeout = 3 * time.Second

// keepForAnswer is how many of a message's PerMessage edits progress leaves to the answer.
const keepForAnswer = 2

// liveRun is a shown run's draft while the agent works.
type liveRun struct {
	session, chat string
	draft         *streaming.Draft
	id            string // the draft's platform id, once it is sent
	shown         string // what the platform shows
	edits         int
	opened        time.Time   // when the draft was sent: its first progress edit waits PerChat
	pending       bool        // an edit is queued, or waiting for its time (stop)
	reserved      bool        // the waiting edit holds a token of the account's bucket
	stop          func() bool // the waiting edit's wake-up
	broken        bool        // the platform refused an edit: the draft is left as it is
}

// Self-messages and jobs of the live drafts.
type (
	// showJob opens a run's draft (with text; none in mode off) and sends typing.
	showJob struct {
		ev    *messages.TurnEvent
		key   string
		draft bool
		text  string
		run   *liveRun
	}
	draftOpened struct {
		key, id, text string
		run           *liveRun
	}
	editJob struct {
		key, chat, id, text string
		run                 *liveRun
	}
	editDue struct {
		run *liveRun
		key string
	}
	editDone struct {
		key, text string
		run       *liveRun
		err       error
	}
)

// liveFor makes the live draft of a run that starts, when the account shows one.
func (c *Connector) liveFor(ev *messages.TurnEvent) *liveRun {
	if _, ok := c.editor(); !ok || c.stream.Mode == streaming.Off || ev.SessionKey == "" || ev.ThreadID != "" {
		return nil
	}
	return &liveRun{session: ev.SessionKey, chat: ev.ChatID,
		draft: streaming.New(c.stream, ev.SessionKey, agent.ShownText)}
}

// onLiveEvent feeds a run's event to its draft and has the draft edited when it changed.
func (c *Connector) onLiveEvent(ctx actor.Context, ev *messages.TurnEvent) {
	key := showKey(ev.SessionKey, ev.ChatID)
	if lr := c.live[key]; lr != nil && lr.draft.Apply(*ev) {
		c.scheduleEdit(ctx, key, lr)
	}
}

// dropLive forgets a run's draft (answered or ended): its waiting or queued edit goes too.
func (c *Connector) dropLive(session, chat string) {
	key := showKey(session, chat)
	lr := c.live[key]
	if lr == nil {
		return
	}
	delete(c.live, key)
	if lr.stop != nil && lr.stop() && lr.reserved {
		c.budget.refund()
	}
	q := c.queues[chat]
	kept := q[:0]
	for _, job := range q {
		if e, ok := job.(*editJob); ok && e.run == lr {
			continue
		}
		kept = append(kept, job)
	}
	clear(q[len(kept):])
	if len(kept) < len(q) {
		c.queues[chat] = kept
	}
}

// showFirst is the job that first shows a run: its draft (by the mode) and typing.
func (c *Connector) showFirst(ev *messages.TurnEvent) any {
	key := showKey(ev.SessionKey, ev.ChatID)
	job := &showJob{ev: ev, key: key}
	if lr := c.live[key]; lr != nil && c.mayDraft(c.deps.clock().Now()) {
		job.draft, job.text, job.run = true, lr.draft.Render(), lr
	}
	return job
}

// onDraftOpened notes the draft a show job sent, and edits it when the run went on meanwhile.
func (c *Connector) onDraftOpened(ctx actor.Context, msg *draftOpened) {
	if c.live[msg.key] != msg.run || msg.id == "" {
		return
	}
	msg.run.id, msg.run.shown, msg.run.opened = msg.id, msg.text, c.deps.clock().Now()
	c.scheduleEdit(ctx, msg.key, msg.run)
}

// scheduleEdit queues an edit of the run's draft when it shows something new, at the
// earliest time the platform's limits allow.
func (c *Connector) scheduleEdit(ctx actor.Context, key string, lr *liveRun) {
	if lr.id == "" || lr.pending || lr.broken {
		return
	}
	if n := c.limits.PerMessage; n > 0 && lr.edits >= n-keepForAnswer {
		return
	}
	text := lr.draft.Render()
	if text == lr.shown {
		return
	}
	now := c.deps.clock().Now()
	wait := max(c.pace.next(lr.chat).Sub(now), lr.opened.Add(c.limits.PerChat).Sub(now))
	if !lr.reserved {
		wait = max(wait, c.budget.reserve(now))
		lr.reserved = c.budget.limited()
	}
	lr.pending = true
	if wait > 0 {
		self, root := ctx.Self(), ctx.ActorSystem().Root
		lr.stop = c.deps.clock().AfterFunc(wait, func() { root.Send(self, &editDue{run: lr, key: key}) })
		return
	}
	lr.reserved, lr.stop = false, nil
	c.enqueue(ctx, lr.chat, &editJob{key: key, chat: lr.chat, id: lr.id, text: text, run: lr})
}

func (c *Connector) onEditDue(ctx actor.Context, msg *editDue) {
	if c.live[msg.key] != msg.run {
		return
	}
	msg.run.pending, msg.run.stop = false, nil
	c.scheduleEdit(ctx, msg.key, msg.run)
}

func (c *Connector) onEditDone(ctx actor.Context, msg *editDone) {
	lr := msg.run
	if c.live[msg.key] != lr {
		return
	}
	lr.pending = false
	switch {
	case msg.err == nil:
		lr.shown = msg.text
		lr.edits++
	case errors.Is(msg.err, channels.ErrPermanent):
		lr.broken = true // deleted, or past the platform's limits: the answer will be sent anew
	}
	c.scheduleEdit(ctx, msg.key, lr)
}

// editDraft runs an edit job (in the chat's goroutine): a progress edit that the platform
// does not take at once is given up.
func (c *Connector) editDraft(ctx context.Context, root *actor.RootContext, job *editJob) {
	e, _ := c.editor()
	ectx, cancel := context.WithTimeout(ctx, progressEditTimeout)
	err := e.Edit(ectx, job.chat, job.id, job.text)
	cancel()
	c.pace.done(job.chat, c.deps.clock().Now())
	if err != nil {
		c.log.Debug().Err(err).Str("chat", job.chat).Msg("progress edit")
	}
	root.Send(c.self, &editDone{key: job.key, text: job.text, run: job.run, err: err})
}

// editPacer keeps the time each chat's last edit ended, for the platform's per-chat limit
// (an answer edited into its own fresh "…" draft does not wait: only edits count). The chat's jobs (goroutines) write it, the Connector reads it.
type editPacer struct {
	per   time.Duration
	mu    sync.Mutex
	last  map[string]time.Time
	swept time.Time
}

func newEditPacer(per time.Duration) *editPacer {
	return &editPacer{per: per, last: map[string]time.Time{}}
}

// next is when chat may be edited again.
func (p *editPacer) next(chat string) time.Time {
	if p.per <= 0 {
		return time.Time{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.last[chat]; ok {
		return t.Add(p.per)
	}
	return time.Time{}
}

// done notes that a call to chat ended at; entries older than per are swept now and then.
func (p *editPacer) done(chat string, at time.Time) {
	if p.per <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[chat] = at
	if at.Sub(p.swept) > time.Minute {
		p.swept = at
		for k, t := range p.last {
			if at.Sub(t) > p.per {
				delete(p.last, k)
			}
		}
	}
}

// wait blocks until chat may be edited again, or ctx ends.
func (p *editPacer) wait(ctx context.Context, chat string, clock Clock) {
	d := p.next(chat).Sub(clock.Now())
	if d <= 0 {
		return
	}
	wake := make(chan struct{})
	stop := clock.AfterFunc(d, func() { close(wake) })
	select {
	case <-wake:
	case <-ctx.Done():
		stop()
	}
}

// editBudget is the account's token bucket of progress edits (the Connector's alone). A
// reservation may take the bucket below zero: the edit then waits its turn.
type editBudget struct {
	rate   float64 // tokens a second; 0: no limit
	tokens float64
	at     time.Time
}

func (b *editBudget) limited() bool { return b.rate > 0 }

// reserve takes a token and returns how long the edit must wait for it.
func (b *editBudget) reserve(now time.Time) time.Duration {
	if b.rate <= 0 {
		return 0
	}
	if b.at.IsZero() {
		b.tokens, b.at = b.rate, now
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(b.rate, b.tokens+b.rate*d.Seconds())
		b.at = now
	}
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// refund gives back the token of an edit that was not made.
func (b *editBudget) refund() {
	if b.rate > 0 {
		b.tokens = min(b.rate, b.tokens+1)
	}
}
