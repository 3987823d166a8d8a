package actors

import (
	"context"
	"strconv"

	"github.com/reefgw/reef/channels"
)

// Stray drafts. Telegram has no idempotency key, so a kill in the instant between Telegram
// taking a draft's send and reef noting its id (connector_journal.go) leaves a draft nobody
// knows; the next attempt sends another. But Telegram numbers a chat's messages in order,
// and the draft's record holds "after", the newest message reef had sent in the chat when
// the draft was recorded. When the next attempt's draft comes back with id N, every message
// of the chat numbered between after and N that the journal does not know as reef's is the
// user's, another bot's, or the lost draft (sends in one chat go one at a time, and every
// id reef gets is noted). sweepStrays asks Telegram which, without touching anything but
// reef's own: an edit to the draft's text is refused for a message that is not the bot's
// ("message can't be edited", or not found), and for the lost draft changes nothing or
// only its progress text. The messages the bot may edit are then deleted.

// sweepMax bounds the messages one sweep asks about (each is an edit, paced per chat).
const sweepMax = 8

// sweepStrays deletes what earlier sends of d left in its chat, d being the draft a new
// send of an earlier record made (see above). Only where message ids count the chat's
// messages (Telegram's "<chat>:<n>") and the journal reaches back to d.after.
func (c *Connector) sweepStrays(ctx context.Context, d draft) {
	c.sweepStraysFor(ctx, d, "")
}

// sweepStraysFor is sweepStrays for a reply's draft when text (the reply) is not empty: the
// first stray the bot may edit is edited to text instead, and kept: its id is returned
// ("" none). It is the reply's own send that a kill cut off (the edit then changes nothing:
// the user saw the reply once), or a lost draft of the reply's, which takes it in place of d.
func (c *Connector) sweepStraysFor(ctx context.Context, d draft, text string) (kept string) {
	e, canEdit := c.editor()
	del, canDelete := c.ch.(channels.Deleter)
	if !canEdit || !canDelete || d.after == "" {
		return ""
	}
	if c.deps.Cluster != nil {
		// The journal is this node's file: what another node sent in the chat (the
		// session's earlier owner, a cron delivery) is unknown to it, and would look like a
		// lost draft. In cluster mode a stray draft stays (docs/scaling.md).
		return ""
	}
	chat, lo, ok1 := messageNumberIn(d.after)
	_, hi, ok2 := messageNumberIn(d.id)
	if !ok1 || !ok2 || chat != d.chat || hi-lo <= 1 || hi-lo > 4*sweepMax {
		return ""
	}
	ours, ok := c.journal.sentIn(chat, lo, hi)
	if !ok {
		return ""
	}
	asked := 0
	for n := lo + 1; n < hi && asked < sweepMax; n++ {
		if ours[n] {
			continue
		}
		asked++
		id := chat + ":" + strconv.FormatInt(n, 10)
		adopt, shown := kept == "" && text != "", draftText
		if adopt {
			shown = text
		}
		c.pace.wait(ctx, chat, c.deps.clock())
		err := e.Edit(ctx, chat, id, shown)
		c.pace.done(chat, c.deps.clock().Now())
		if err != nil {
			continue // not the bot's, or gone
		}
		if adopt {
			kept = id
			c.log.Info().Str("chat", chat).Str("message", id).Msg("a reply's earlier send found: its send was cut off by a restart")
			continue
		}
		if err := del.Delete(ctx, chat, id); err != nil {
			c.log.Debug().Err(err).Str("chat", chat).Msg("stray draft not deleted")
			continue
		}
		c.log.Info().Str("chat", chat).Str("message", id).Msg("stray draft deleted: its send was cut off by a restart")
	}
	return kept
}
