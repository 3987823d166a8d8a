package actors

import (
	"context"
	"errors"
	"fmt"
	"github.com/reefgw/reef/access"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/sessionkey"
)

// intake is one admitted inbound message of a batch on its way to its session's inbox.
type intake struct {
	idx   int // its place in the batch
	in    *messages.Inbound
	store bool // within the rate limit: stored and answered; over it, only marked seen
	dup   bool // the platform delivered it before
	media bool // over the sender's file limit: not stored, the sender told once (connector_media.go)
	err   error
}

// deliverAllFunc returns the DeliverAll the channel calls from its own goroutines (a
// channel's Deliver is a batch of one). It returns only after the batch's messages are
// durably in their sessions' inboxes (or known as duplicates), written in one transaction:
// a Telegram getUpdates answer of 100 messages costs one commit, and the next poll follows
// sooner.
func (c *Connector) deliverAllFunc(root *actor.RootContext, self *actor.PID) channels.DeliverAll {
	settings := c.deps.session().withDefaults()
	limiter := newRateLimiter(c.channel, settings.RateLimit)
	meter := media.NewMeter()
	return func(ctx context.Context, ins []messages.Inbound) []error {
		chats := make([]string, len(ins))
		for i := range ins {
			chats[i] = ins[i].ChatID
		}
		root.Send(self, &inboundHit{at: c.deps.now(), chats: chats})
		errs := make([]error, len(ins))
		refused := map[string]bool{} // chats with a refused message: their later ones wait
		batch := make([]*intake, 0, len(ins))
		for i := range ins {
			in := &ins[i]
			c.journal.seen(in.ChatID, in.MessageID) // a floor for the chat's next draft (connector_sweep.go)
			if refused[in.ChatID] {
				errs[i] = channels.ErrNotAttempted
				continue
			}
			ok, err := c.ready(ctx, root, self, settings, in)
			if err != nil {
				errs[i], refused[in.ChatID] = err, true
				continue
			}
			if ok {
				it := &intake{idx: i, in: in, store: limiter.take(rateKey(in), c.deps.now())}
				if it.store && len(in.Media) > 0 {
					it.store = c.meterMedia(root, self, meter, in) // connector_media.go
					it.media = !it.store
				}
				batch = append(batch, it)
			}
		}
		c.acceptAll(ctx, root, batch, refused)
		for _, it := range batch {
			switch {
			case it.err != nil || it.dup:
				if it.store {
					limiter.refund(rateKey(it.in))
				}
				errs[it.idx] = it.err
			case it.media: // only marked seen; meterMedia told the sender
			case !it.store:
				c.overLimit(root, self, limiter, it.in)
			default:
				root.Send(c.router, &routeInbound{in: *it.in})
			}
		}
		return errs
	}
}

// ready readies an inbound message for the inbox: valid text, the channel's access rules, its
// session key. It reports false for a message answered or dropped here (acknowledged to the
// platform all the same), and an error when the message must be delivered again.
func (c *Connector) ready(ctx context.Context, root *actor.RootContext, self *actor.PID, settings SessionSettings, in *messages.Inbound) (bool, error) {
	in.Channel, in.Account = c.channel, c.account
	red := c.deps.redactor() // the inbox and everything after see no secret a person pasted or quoted
	in.Text = red.apply(normalizeText(in.Text))
	in.ReplyTo = red.apply(in.ReplyTo)
	in.SenderName = access.DisplayName(in.SenderName) // no bidi override or line break in a name reef shows
	if len(in.Text) > settings.MaxInbound {
		root.Send(self, &messages.Outbound{Channel: c.channel, Account: c.account, ChatID: in.ChatID,
			ThreadID: in.ThreadID, ReplyToID: in.MessageID,
			Text: fmt.Sprintf("That message is too long for me (%d KB; the limit is %d KB). Please send it in smaller parts or as a file.",
				len(in.Text)>>10, settings.MaxInbound>>10)})
		root.Send(self, &messages.TurnEvent{Kind: messages.TurnFinal, Channel: c.channel, Account: c.account, ChatID: in.ChatID})
		return false, nil
	}
	if ok, err := c.admit(ctx, root, self, in); !ok || err != nil {
		return false, err
	}
	owner := c.deps.rules(c.name).IsOwner(in) // with dmScope main only the owner shares main
	in.SessionKey = sessionkey.ForSender(c.deps.agentFor(in).ID, settings.DMScope, in, owner)
	if in.Time.IsZero() {
		in.Time = c.deps.now()
	}
	return true, nil
}

// acceptAll writes a batch to the inboxes in one transaction, with the dedup ids that tell
// a redelivery from a new message. Should that write fail, each message is written on its
// own, in order, so that one bad message does not hold back the others; a chat's messages
// after a refused one are not attempted.
func (c *Connector) acceptAll(ctx context.Context, root *actor.RootContext, batch []*intake, refused map[string]bool) {
	if len(batch) == 0 {
		return
	}
	now := c.deps.now()
	err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error {
		for _, it := range batch {
			if err := it.apply(tx, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || len(batch) == 1 || ctx.Err() != nil {
		for _, it := range batch {
			it.err = c.acceptErr(err)
		}
		return
	}
	for _, it := range batch {
		if refused[it.in.ChatID] {
			it.err = channels.ErrNotAttempted
			continue
		}
		it.err = c.acceptErr(writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error { return it.apply(tx, now) }))
		if it.err != nil {
			refused[it.in.ChatID] = true
		}
	}
}

func (c *Connector) acceptErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("connector %s: accept: %w", c.name, err)
}

// apply marks the message seen and, unless it was seen before or is over the rate limit,
// appends it to its session's inbox. Storage may apply a write twice (a group commit that
// failed is retried write by write), so apply starts afresh each time.
func (it *intake) apply(tx persistence.Tx, now time.Time) error {
	it.dup = false
	in := it.in
	if in.MessageID != "" {
		fresh, err := tx.MarkSeen(strings.Join([]string{in.Channel, in.Account, in.ChatID, in.MessageID}, ":"), now)
		if err != nil {
			return err
		}
		if !fresh {
			it.dup = true
			return nil
		}
	}
	if !it.store {
		return nil
	}
	seq, err := tx.AppendInbox(in.SessionKey, *in)
	in.InboxSeq = seq
	return err
}

// overLimit tells a sender over the rate limit, at most once a minute, that messages were
// skipped. Such a message is only marked seen (so the platform does not deliver it again),
// not stored or answered.
func (c *Connector) overLimit(root *actor.RootContext, self *actor.PID, rl *rateLimiter, in *messages.Inbound) {
	if !rl.notify(rateKey(in), c.deps.now()) {
		return
	}
	c.log.Warn().Str("sender", in.SenderID).Str("chat", in.ChatID).
		Msg("sender is over the message rate limit; dropping messages (logged once a minute)")
	root.Send(self, &messages.Outbound{Channel: c.channel, Account: c.account, ChatID: in.ChatID,
		ThreadID: in.ThreadID, ReplyToID: in.MessageID, Text: rateNotice})
}
