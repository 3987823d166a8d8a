package actors

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// A reply the platform did not take (unreachable, 5xx, a timeout) stays in its outbox row and
// at the head of its chat's queue, and the chat waits: later replies and the run's end stay
// behind it, in order, and progress meant for the moment is dropped. The Connector tries it
// again after a backoff (a timer whose message comes back to the Connector), and at once when
// the channel shows it is back: a call to the platform succeeded (a reply in another chat, a
// Telegram getUpdates answer: channels.Reachable) or the chat wrote again. A reply still
// refused after OutboxRetry.MaxAge becomes a dead letter. Since the run's draft is kept until
// its reply went out, the reply still replaces the draft when it finally goes.

// OutboxRetry is how a Connector retries replies the platform did not take.
type OutboxRetry struct {
	First time.Duration // the first wait, doubling after each failure; default 1 s
	Max   time.Duration // the longest wait; default 5 min
	// MaxAge is how long a reply is tried from its first failure (in this Connector's life:
	// after a restart the count starts again) before it is set aside; default 24 h.
	MaxAge time.Duration
}

func (r OutboxRetry) withDefaults() OutboxRetry {
	if r.First <= 0 {
		r.First = time.Second
	}
	if r.Max <= 0 {
		r.Max = 5 * time.Minute
	}
	r.Max = max(r.Max, r.First)
	if r.MaxAge <= 0 {
		r.MaxAge = 24 * time.Hour
	}
	return r
}

// flushGap bounds how often a platform's answers to other calls try a waiting chat again.
const flushGap = 2 * time.Second

// probeEvery bounds the send side's wait while chats wait for the platform: however long
// their backoffs have grown, the chat that waited longest is tried this often (one call),
// and its success tries the others (flush). Without it a platform back after a long outage
// would wait for the longest backoff, or for the poller's reconnect.
const probeEvery = 5 * time.Second

// probeDue is the Connector's self-message when the probe is due.
type probeDue struct{}

// probeLater arms the probe while chats wait and none is armed.
func (c *Connector) probeLater(ctx actor.Context) {
	if c.probe != nil || len(c.retries) == 0 {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	c.probe = c.deps.clock().AfterFunc(probeEvery, func() { root.Send(self, &probeDue{}) })
}

// onProbeDue tries again the waiting chat tried longest ago, unless one was tried lately.
func (c *Connector) onProbeDue(ctx actor.Context) {
	c.probe = nil
	now := c.deps.now()
	oldest := ""
	for chat, r := range c.retries {
		if r.stop == nil { // being tried now
			return
		}
		if oldest == "" || r.tried.Before(c.retries[oldest].tried) {
			oldest = chat
		}
	}
	if oldest != "" && now.Sub(c.retries[oldest].tried) >= probeEvery {
		c.resume(ctx, oldest)
		return
	}
	c.probeLater(ctx)
}

// deadReplyBucket holds replies set aside after OutboxRetry.MaxAge:
// "<session key>#<20-digit outbox seq>" → the Outbound as JSON.
const deadReplyBucket = "deadreply"

// chatRetry is a chat waiting to send its head reply again.
type chatRetry struct {
	out   *messages.Outbound
	since time.Time     // its first failure
	tried time.Time     // its last failure
	wait  time.Duration // the backoff before the last timer
	stop  func() bool   // cancels the timer; nil while the reply is being tried
}

// retryDue is the Connector's self-message when a chat's backoff is over.
type retryDue struct {
	chat string
	r    *chatRetry
}

// reachable is the Connector's self-message when the channel reported a successful call.
type reachable struct{}

// outKey names an outbox row.
func outKey(out *messages.Outbound) string { return inboxRef(out.SessionKey, out.OutboxSeq) }

// hold notes that the Connector has out, and reports false when it already had it (a
// Session respawned or restarted sends its outbox again): that copy is dropped.
func (c *Connector) hold(out *messages.Outbound) bool {
	if out.OutboxSeq == 0 {
		return true
	}
	k := outKey(out)
	if _, ok := c.held[k]; ok {
		return false
	}
	if _, ok := c.done[k]; ok {
		return false
	}
	c.held[k] = false
	return true
}

// recentlyDone is how long the Connector remembers a reply it is done with: a Session that
// read its outbox just before the row was deleted may send it again a moment later.
const recentlyDone = time.Minute

// release forgets out and tells its Session, unless it was told when the reply first waited.
func (c *Connector) release(ctx actor.Context, out *messages.Outbound, err error) {
	if out.OutboxSeq == 0 {
		return
	}
	k := outKey(out)
	if !c.held[k] {
		c.confirm(ctx.ActorSystem().Root, out, err)
	}
	delete(c.held, k)
	now := c.deps.now()
	if len(c.done) >= 1024 {
		for k, at := range c.done {
			if now.Sub(at) > recentlyDone {
				delete(c.done, k)
			}
		}
	}
	c.done[k] = now
}

// park puts a reply the platform did not take back at the head of its chat's queue and
// has the chat wait for the backoff; a reply refused for OutboxRetry.MaxAge is set aside.
func (c *Connector) park(ctx actor.Context, chat string, out *messages.Outbound, err error) {
	now := c.deps.now()
	cfg := c.deps.Retry.withDefaults()
	r := c.retries[chat]
	if r == nil || r.out != out {
		r = &chatRetry{out: out, since: now, wait: cfg.First}
		c.retries[chat] = r
		if out.OutboxSeq != 0 && !c.held[outKey(out)] {
			// The Session may passivate: the reply is in the outbox and in the Connector's hands.
			c.confirm(ctx.ActorSystem().Root, out, err)
			c.held[outKey(out)] = true
		}
	} else {
		r.wait = min(r.wait*2, cfg.Max)
	}
	r.tried = now
	if now.Sub(r.since) >= cfg.MaxAge {
		delete(c.retries, chat)
		c.deadReply(ctx, out, err, now.Sub(r.since))
		c.next(ctx, chat)
		return
	}
	c.queues[chat] = append([]any{out}, c.queues[chat]...)
	wait := r.wait/2 + rand.N(r.wait/2+1)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	r.stop = c.deps.clock().AfterFunc(wait, func() { root.Send(self, &retryDue{chat: chat, r: r}) })
	c.log.Warn().Err(err).Str("chat", chat).Str("retryIn", wait.Round(time.Millisecond).String()).Str("waiting", now.Sub(r.since).Round(time.Millisecond).String()).
		Msg("reply not sent; it stays in the outbox and is sent when the platform is back")
	c.probeLater(ctx)
}

// sent ends the wait of chat once its head reply went out (or was refused for good).
func (c *Connector) sent(chat string, out *messages.Outbound) {
	if r := c.retries[chat]; r != nil && r.out == out {
		delete(c.retries, chat)
	}
}

// waits reports whether chat waits for its backoff.
func (c *Connector) waits(chat string) bool {
	r := c.retries[chat]
	return r != nil && r.stop != nil
}

// resume lets a waiting chat send again now.
func (c *Connector) resume(ctx actor.Context, chat string) {
	r := c.retries[chat]
	r.stop()
	r.stop = nil
	c.next(ctx, chat)
}

// onRetryDue tries a waiting chat's reply again.
func (c *Connector) onRetryDue(ctx actor.Context, msg *retryDue) {
	if c.retries[msg.chat] != msg.r || msg.r.stop == nil {
		return // flushed or sent meanwhile
	}
	c.resume(ctx, msg.chat)
}

// flush tries the waiting chats again at once: the platform took a call. A chat tried less
// than flushGap (or OutboxRetry.First, when shorter) ago keeps its timer, so that a platform
// that answers some calls and refuses replies is not asked again on every answer; the chats
// given are tried anyway (they wrote again). However long a chat's own backoff has grown,
// the platform's first answer after an outage sends its reply within seconds.
func (c *Connector) flush(ctx actor.Context, chats ...string) {
	if len(c.retries) == 0 {
		return
	}
	now, first := c.deps.now(), min(c.deps.Retry.withDefaults().First, flushGap)
	wrote := map[string]bool{}
	for _, chat := range chats {
		wrote[chat] = true
	}
	for chat, r := range c.retries {
		if r.stop == nil || !wrote[chat] && now.Sub(r.tried) < first {
			continue
		}
		c.resume(ctx, chat)
	}
}

// stopRetries cancels the backoff timers (the Connector stops; the replies stay in the outbox).
func (c *Connector) stopRetries() {
	if c.probe != nil {
		c.probe()
		c.probe = nil
	}
	for chat, r := range c.retries {
		if r.stop != nil {
			r.stop()
		}
		delete(c.retries, chat)
	}
}

// deadReply sets aside a reply the platform refused for OutboxRetry.MaxAge: its outbox row
// moves to deadReplyBucket.
func (c *Connector) deadReply(ctx actor.Context, out *messages.Outbound, err error, age time.Duration) {
	c.release(ctx, out, err)
	log := c.log.With().Str("chat", out.ChatID).Str("session", out.SessionKey).Uint64("outboxSeq", out.OutboxSeq).
		Dur("waited", age).AnErr("error", err).Logger()
	if out.OutboxSeq == 0 {
		log.Error().Msg("reply dropped: the platform refused it for too long")
		return
	}
	b, jerr := json.Marshal(out)
	if jerr != nil {
		log.Error().AnErr("marshal", jerr).Msg("dead reply not recorded; it stays in the outbox")
		return
	}
	key, seq := out.SessionKey, out.OutboxSeq
	if d, ok := c.loadDraft(draftRecordKey(key, seq)); ok && d.id != "" {
		c.queues[out.ChatID] = append(c.queues[out.ChatID], &dropJob{d: d}) // its draft goes with it
	}
	ctx.Send(c.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			if err := tx.Put(deadReplyBucket, inboxRef(key, seq), b); err != nil {
				return err
			}
			if err := tx.Delete(draftBucket, draftRecordKey(key, seq)); err != nil {
				return err
			}
			return tx.DeleteOutbox(key, seq)
		},
		Done: func(err error) {
			if err != nil {
				log.Error().AnErr("write", err).Msg("dead reply not recorded; it stays in the outbox")
				return
			}
			log.Error().Msg("reply set aside as a dead letter: the platform refused it for too long")
		},
	})
}

// DeadReply is a reply set aside because the platform refused it for too long.
type DeadReply struct {
	SessionKey string            `json:"sessionKey"`
	OutboxSeq  uint64            `json:"outboxSeq"`
	Outbound   messages.Outbound `json:"outbound"`
}

// ListDeadReplies returns the replies set aside, by session key and seq.
func ListDeadReplies(r persistence.Reader) ([]DeadReply, error) {
	var out []DeadReply
	err := r.Scan(deadReplyBucket, "", func(k string, v []byte) error {
		var d DeadReply
		if err := json.Unmarshal(v, &d.Outbound); err != nil {
			return fmt.Errorf("dead reply %s: %w", k, err)
		}
		d.SessionKey, d.OutboxSeq = d.Outbound.SessionKey, d.Outbound.OutboxSeq
		out = append(out, d)
		return nil
	})
	return out, err
}
