package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// A reply sent as its own message. A reply is delivered by editing a draft so that sending it
// again after a kill only repeats an edit (connector_draft.go). But a platform takes one edit
// per chat a second (channels.EditLimits.PerChat), and when a chat's runs answer one after
// another (a person sending several messages at once; the first run takes the first, the
// next run the rest), the second reply's edit would wait a second behind the first's, the
// third two. A reply with no draft of its own yet, in a chat whose edit would wait, is sent
// instead as a new message carrying its text — recorded before its send like a draft (its
// key, and "after": the newest message reef knew in the chat), its id noted in the journal
// the moment the send returns and then recorded. It is then exactly-once the way a draft is:
//   - a resend after a kill that finds the id (recorded, or in the journal) edits the same
//     text into the same message, which changes nothing;
//   - a kill that cut the send off before its id was noted leaves a record without an id: the
//     resend sends a "…" draft to learn where the chat's messages are, and sweepReply looks
//     between "after" and it for a message of the bot's that reef does not know — the lost
//     send — and keeps it as the reply (an edit to the same text: it showed once), deleting
//     the new draft. Only when there is none does the reply go into the new draft.

// editWaits reports whether an edit in chat would have to wait for the platform's per-chat
// pace, and a reply sent as a new message could be found again after a kill: reef keeps a
// draft journal (a sweep needs it), is not in cluster mode (which sweeps nothing), and the
// platform numbers the chat's messages (Telegram: the sweep can look between two of them;
// elsewhere — Slack has no idempotency key either — the reply keeps to its draft).
func (c *Connector) editWaits(chat string) bool {
	if c.journal == nil || c.deps.Cluster != nil || !c.pace.next(chat).After(c.deps.clock().Now()) {
		return false
	}
	_, _, numbered := messageNumberIn(c.journal.newest(chat))
	return numbered
}

// sendAsMessage sends out, which has no draft yet (d: the record to make, in out's chat), as a
// new message recorded under rec (see above). It reports whether the reply was sent; an error
// leaves it in the outbox, to be found again or sent by the next attempt.
func (c *Connector) sendAsMessage(ctx context.Context, root *actor.RootContext, out *messages.Outbound, rec string, d draft) (bool, error) {
	if c.moved(out) {
		return false, errMoved
	}
	d, err := c.sendRecorded(ctx, root, rec, d, out.ThreadID, out.Text)
	if d.id == "" {
		return false, err
	}
	if err != nil { // sent, its id in the journal: a resend finds it there
		c.log.Warn().Err(err).Str("chat", out.ChatID).Msg("reply sent; its record not written")
	}
	c.sentIDs.note(out.ChatID, outKey(out), []string{d.id})
	return true, nil
}

// sweepReply is sweepDue for the draft d of reply out: a stray it finds may be out's own earlier
// send, cut off by a kill, and is kept as the reply in place of d (which goes); shows is then
// true: the reply is in it already.
func (c *Connector) sweepReply(ctx context.Context, root *actor.RootContext, rec string, d draft, out *messages.Outbound) (_ draft, shows bool) {
	if !d.due || d.legacy || d.id == "" {
		return d, false
	}
	kept := c.sweepStraysFor(ctx, d, out.Text)
	probe := d
	if kept != "" {
		d.id, shows = kept, true
	}
	d.due = false
	if kept != "" {
		// The draft sent to find kept goes first: a kill before the record below leaves the
		// record naming it (gone now) and due, and the next resend's sweep keeps kept again,
		// unknown to the journal as it still is. Noted as reef's only once recorded: noted
		// first, the next sweep would take it for reef's known message, not the lost one,
		// and the reply would go into a new draft (a duplicate).
		c.dropMessage(ctx, probe)
	}
	err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error { return tx.Put(draftBucket, rec, d.record()) })
	if err != nil {
		c.log.Debug().Err(err).Msg("draft: sweep not recorded")
	} else if kept != "" {
		c.journal.sent([]string{kept})
	}
	return d, shows
}
