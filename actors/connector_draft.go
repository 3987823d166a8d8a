package actors

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Drafts make replies idempotent on platforms that can edit messages. When a run is shown,
// the Connector sends a short draft and records its id durably; the reply is delivered by
// editing the draft. If reef is killed after delivering a reply but before its outbox row is
// cleared, the reply is delivered again after the restart — as an edit to the same text,
// which changes nothing, instead of a second message. (Telegram has no idempotency key;
// marking a reply sent only after the platform accepted it always leaves that window.)
// Threads and topics get no draft: Editor and Deleter take only a chat id, which cannot name
// a message inside a thread on every platform.
// A platform that finds its own sends again after a crash (channels.OnceSender: Slack's
// message metadata) needs no draft for that: a reply there takes the run's draft when the run
// was shown, and is otherwise sent as a new message.
//
// A draft belongs to one owner, and only its owner edits or deletes it:
//   - the session's running run (record key: the session key): the run shows its progress in
//     it, a re-run of the same messages after a restart reuses it, and the run's end deletes
//     it when no reply took it;
//   - one reply (record key: the session key, "\n", the outbox seq): before the reply is edited
//     into the draft, the record moves from the run to the reply in one write. From then on
//     no run sees it — a later run makes its own draft — and only a resend of that outbox
//     row edits it again (to the same text). The record goes in the write that deletes the
//     outbox row.
//
// So a message that holds a delivered answer is never edited or deleted by another run, also
// when a kill lands between the edit and that write.
//
// A draft is recorded before it is sent (with a key and no message id yet), and sent with that
// key as its idempotency key: on a platform that honours one (Feishu's uuid, Discord's
// enforced nonce for a few minutes) a draft sent just before a kill is found again after the
// restart — sending it again returns the same message. Telegram has none: the id is noted in
// the draft journal (connector_journal.go) the moment the send returns, so that a kill before
// the id's commit does not lose it; a draft whose send a kill cut off before that is swept
// away when the next attempt's draft is sent (connector_sweep.go).

const (
	draftText    = "…"
	draftBucket  = "drafts" // see draftRecordKey; value: chat id \n platform message id ("" until sent) \n key \n owner mark \n after
	draftMaxRune = 1900     // longer replies are sent as new messages (the smallest platform limit is 2000)
	// draftMark ends the records of this layout. A run's record without it was written by a
	// reef before drafts had owners: it may hold a delivered reply, so no run reuses or
	// deletes it; the next reply takes it, as that reef did (its own, resent after a crash).
	draftMark = "v2"
)

type draft struct {
	chat, id, key string
	legacy        bool // recorded without draftMark
	// after is the newest message reef had sent in the chat when the draft was recorded
	// ("" unknown): a draft sent then, but not noted, has an id above it (sweepStrays).
	after string
	// due: earlier sends of the draft may have been cut off by kills, and what they left has
	// not been swept yet (sweepDue). Recorded with a draft sent again, and set for one whose
	// id came from the journal (its record never got it: a kill followed the send).
	due bool
}

// record is a draft as draftBucket stores it.
func (d draft) record() []byte {
	due := ""
	if d.due {
		due = "sweep"
	}
	return []byte(d.chat + "\n" + d.id + "\n" + d.key + "\n" + draftMark + "\n" + d.after + "\n" + due)
}

// draftRecordKey is the record of a session's run draft (seq 0) or of the draft that holds
// outbox row seq.
func draftRecordKey(session string, seq uint64) string {
	if seq == 0 {
		return session
	}
	return fmt.Sprintf("%s\n%020d", session, seq)
}

// sendsOnce reports that the platform delivers a stored reply at most once by itself
// (channels.OnceSender): a reply without a run's draft needs none.
func (c *Connector) sendsOnce() bool {
	o, ok := c.ch.(channels.OnceSender)
	return ok && o.SendsOnce()
}

func (c *Connector) editor() (channels.Editor, bool) {
	e, ok := c.ch.(channels.Editor)
	return e, ok
}

// loadDraft returns the draft recorded under rec (draftRecordKey), if any. One recorded
// without an id gets the id the journal noted for its key, if any.
func (c *Connector) loadDraft(rec string) (draft, bool) {
	var d draft
	var ok bool
	viewWaiting(c.deps.Store, func(r persistence.Reader) error { // storage_outage.go
		v, found, err := r.Get(draftBucket, rec)
		if err != nil || !found {
			return err
		}
		d, ok = parseDraft(string(v)), true
		return nil
	})
	if ok && d.id == "" && d.key != "" {
		d.id, d.due = c.journal.lookup(d.key)
	}
	return d, ok
}

// sweepDue sweeps what earlier sends of the draft recorded under rec left behind, when that
// is due, then records that it was done (a kill meanwhile leaves it due). It returns d.
func (c *Connector) sweepDue(ctx context.Context, root *actor.RootContext, rec string, d draft) draft {
	if !d.due || d.legacy || d.id == "" {
		return d
	}
	c.sweepStrays(ctx, d)
	d.due = false
	if err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error { return tx.Put(draftBucket, rec, d.record()) }); err != nil {
		c.log.Debug().Err(err).Msg("draft: sweep not recorded")
	}
	return d
}

func parseDraft(v string) draft {
	var d draft
	var rest, mark string
	d.chat, rest, _ = strings.Cut(v, "\n")
	d.id, rest, _ = strings.Cut(rest, "\n")
	d.key, rest, _ = strings.Cut(rest, "\n")
	mark, rest, _ = strings.Cut(rest, "\n")
	d.after, rest, _ = strings.Cut(rest, "\n")
	d.due = rest == "sweep"
	d.legacy = mark != draftMark
	return d
}

// openDraft sends the draft for a run that started, showing text, unless the session's run
// already has one (a run re-run after a restart reuses it; one recorded but maybe not sent is
// sent again, found again where the platform can). It returns the draft's platform id (""
// when there is none).
func (c *Connector) openDraft(ctx context.Context, root *actor.RootContext, ev *messages.TurnEvent, text string) string {
	if _, ok := c.editor(); !ok || ev.SessionKey == "" || ev.ThreadID != "" {
		return ""
	}
	d, ok := c.loadDraft(ev.SessionKey)
	if ok && !d.legacy && d.chat == ev.ChatID && d.id != "" {
		c.sweepDue(ctx, root, ev.SessionKey, d)
		return d.id
	}
	if !ok || d.legacy || d.chat != ev.ChatID {
		d = draft{}
	}
	d.chat = ev.ChatID
	d, err := c.newDraftText(ctx, root, ev.SessionKey, d, ev.ThreadID, text)
	if err != nil {
		c.log.Warn().Err(err).Str("chat", ev.ChatID).Bool("draft", true).Msg("send failed")
	}
	return d.id
}

// newDraft records a draft in prev's chat under rec, sends it and records its id; only a
// recorded draft is ever edited (prev.after, for a new record: the message it answers, if
// known). prev, when it has a key, is a draft recorded before and
// maybe sent: sending it again with the same key finds it where the platform honours
// idempotency keys, and where it does not, what the earlier send left is swept away once
// the new draft's id shows where to look (sweepStrays).
func (c *Connector) newDraft(ctx context.Context, root *actor.RootContext, rec string, prev draft, thread string) (draft, error) {
	return c.newDraftText(ctx, root, rec, prev, thread, draftText)
}

// newer returns whichever of two message ids of a chat is the later ("" when neither is
// numbered): a new draft's "after" is the newest message reef sent in the chat, or the
// message it answers when that is newer or reef sent nothing there yet.
func newer(a, b string) string {
	_, na, okA := messageNumberIn(a)
	_, nb, okB := messageNumberIn(b)
	switch {
	case okA && (!okB || na >= nb):
		return a
	case okB:
		return b
	}
	return ""
}

// newDraftText is newDraft with the draft showing text.
func (c *Connector) newDraftText(ctx context.Context, root *actor.RootContext, rec string, prev draft, thread, text string) (draft, error) {
	d, err := c.sendRecorded(ctx, root, rec, prev, thread, text)
	if err != nil || d.id == "" {
		return d, err
	}
	return c.sweepDue(ctx, root, rec, d), nil
}

// sendRecorded is newDraftText without the sweep: the caller sweeps (sweepDue, sweepReply).
func (c *Connector) sendRecorded(ctx context.Context, root *actor.RootContext, rec string, prev draft, thread, text string) (draft, error) {
	d := draft{chat: prev.chat, key: prev.key, after: prev.after}
	again := d.key != ""
	if !again {
		d.key, d.after = strconv.FormatUint(rand.Uint64(), 36), newer(c.journal.newest(d.chat), prev.after)
		err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error { return tx.Put(draftBucket, rec, d.record()) })
		if err != nil {
			return draft{}, err
		}
	}
	if !c.drafting.take(ctx) {
		return draft{}, ctx.Err()
	}
	ids, err := c.ch.Send(ctx, messages.Outbound{Channel: c.channel, Account: c.account, ChatID: d.chat, ThreadID: thread, Text: text,
		SessionKey: "draft:" + d.key, OutboxSeq: 1}) // the key the platform dedups by (Feishu: uuid, Discord: nonce)
	if err == nil && len(ids) > 0 {
		c.journal.note(d.key, ids[0]) // before the commit: a kill meanwhile does not lose the id
	}
	c.drafting.give()
	if err != nil {
		return draft{}, err
	}
	if len(ids) == 0 {
		return draft{}, errors.New("the platform returned no message id")
	}
	d.id, d.due = ids[0], again
	err = writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error {
		return tx.Put(draftBucket, rec, d.record())
	})
	return d, err
}

// draftSlots bounds the drafts a Connector has on the wire at once. A kill while a draft's
// send is answered but its id not yet noted leaves that draft behind (Telegram has no
// idempotency key to find it again); how many a kill can catch is how many are in that
// instant at once. Unbounded, a burst (a restart resending every waiting reply, a thousand
// chats answered together) put dozens there, and a loaded machine kept them there for
// milliseconds, waiting for a core: measured 332 stray drafts for 50 kills at load 29. A
// few sends at a time keep the account's own rate (Telegram: about 30 messages a second).
const draftSlots = 4

// slots is a counting semaphore of draft sends.
type slots chan struct{}

// take waits for a slot; false when ctx ended first. A nil slots never waits.
func (s slots) take(ctx context.Context) bool {
	if s == nil {
		return true
	}
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// give returns a slot.
func (s slots) give() {
	if s != nil {
		<-s
	}
}

// deliverByEdit delivers out by editing a draft the reply owns: the run's draft, moved to the
// reply first, or a new one recorded for it (a quick answer, a reply re-sent after a crash).
// The reply itself is then never a new message, so sending it again can only repeat an edit.
// It reports false when the reply must be sent as new messages (not a stored reply, too long
// for one message, a quoted reply, or a draft cannot be made).
func (c *Connector) deliverByEdit(ctx context.Context, root *actor.RootContext, out *messages.Outbound) (bool, error) {
	e, ok := c.editor()
	if !ok || out.SessionKey == "" || out.ThreadID != "" || out.OutboxSeq == 0 {
		return false, nil
	}
	rec := draftRecordKey(out.SessionKey, out.OutboxSeq)
	d, owned := c.loadDraft(rec)
	// too long to fit, a quoted reply (an edit cannot make the draft one), or only files (no
	// text to edit in): the run's draft goes, and the reply is sent anew
	if out.Quote && out.ReplyToID != "" || utf8.RuneCountInString(out.Text) > draftMaxRune || out.Text == "" && len(out.Media) > 0 {
		c.closeDraft(ctx, root, out.SessionKey)
		return false, nil
	}
	switch {
	case owned && d.id != "": // this reply's draft: delivered again after a crash, or a retry
	case owned: // recorded for this reply, maybe sent: find it again where the platform can
		var err error
		if d, err = c.sendRecorded(ctx, root, rec, d, out.ThreadID, draftText); err != nil { // swept below
			c.log.Warn().Err(err).Str("chat", out.ChatID).Bool("draft", true).Msg("send failed")
			return false, nil
		}
	default:
		var err error
		if d, err = c.takeRunDraft(ctx, root, out, rec); err != nil {
			return false, err
		}
		if d.id == "" && d.key == "" && c.sendsOnce() {
			return false, nil // a quick answer: one new message, which the platform finds again after a crash
		}
		if d.id == "" && d.key == "" && c.editWaits(out.ChatID) {
			return c.sendAsMessage(ctx, root, out, rec, d) // connector_anew.go
		}
		if d.id == "" {
			if d, err = c.sendRecorded(ctx, root, rec, d, out.ThreadID, draftText); err != nil { // swept below
				c.log.Warn().Err(err).Str("chat", out.ChatID).Bool("draft", true).Msg("send failed")
				return false, nil
			}
		}
	}
	if c.moved(out) { // cluster mode: frozen while the draft was sent; the new owner delivers
		return false, errMoved
	}
	d, shows := c.sweepReply(ctx, root, rec, d, out) // connector_anew.go
	var err error
	if !shows {
		err = c.editInto(ctx, e, out, d)
	}
	if errors.Is(err, channels.ErrPermanent) {
		// The draft cannot take the reply (deleted or recalled, past the platform's edit
		// window or edit count): take it away where possible, and give the reply a fresh
		// one, recorded in its place, so that a resend after a crash still edits.
		c.log.Info().Err(err).Str("chat", out.ChatID).Msg("draft not editable; the reply gets a new one")
		c.dropMessage(ctx, d)
		if d, err = c.newDraft(ctx, root, rec, draft{chat: out.ChatID, after: out.ReplyToID}, out.ThreadID); err != nil {
			c.log.Warn().Err(err).Str("chat", out.ChatID).Bool("draft", true).Msg("send failed")
			return false, nil
		}
		if err = c.editInto(ctx, e, out, d); errors.Is(err, channels.ErrPermanent) {
			c.dropMessage(ctx, d) // the platform takes no edit here: new messages
			return false, nil
		}
	}
	if err == nil {
		c.sentIDs.note(out.ChatID, outKey(out), []string{d.id}) // the draft is the reply now (connector_edit.go)
	}
	return err == nil, err
}

// dropJob deletes the draft of a reply set aside (a job of its chat's queue).
type dropJob struct{ d draft }

// dropMessage deletes a draft's message where the platform can.
func (c *Connector) dropMessage(ctx context.Context, d draft) {
	if del, isDel := c.ch.(channels.Deleter); isDel {
		if err := del.Delete(ctx, d.chat, d.id); err != nil {
			c.log.Debug().Err(err).Msg("draft not deleted")
		}
	}
}

// editInto edits the reply into its draft d, within the chat's edit pace.
func (c *Connector) editInto(ctx context.Context, e channels.Editor, out *messages.Outbound, d draft) error {
	c.pace.wait(ctx, out.ChatID, c.deps.clock()) // a progress edit or the draft may have just gone
	err := e.Edit(ctx, out.ChatID, d.id, out.Text)
	c.pace.done(out.ChatID, c.deps.clock().Now())
	return err
}

// takeRunDraft moves the session's run draft, if it has one in out's chat, to the reply's
// record rec, in one write that is committed before the draft is edited into the reply: from
// then on no run owns it. Without one it returns the draft to make for the reply (no id; the
// key of a run draft recorded but maybe not sent, which the send may find again).
func (c *Connector) takeRunDraft(ctx context.Context, root *actor.RootContext, out *messages.Outbound, rec string) (draft, error) {
	d, ok := c.loadDraft(out.SessionKey) // one without draftMark is taken too: as reef did before
	if !ok || d.chat != out.ChatID {
		return draft{chat: out.ChatID, after: out.ReplyToID}, nil
	}
	if d.id == "" && d.key == "" {
		return draft{chat: out.ChatID, after: out.ReplyToID}, nil
	}
	err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error {
		if err := tx.Delete(draftBucket, out.SessionKey); err != nil {
			return err
		}
		return tx.Put(draftBucket, rec, d.record())
	})
	if err != nil {
		return draft{}, fmt.Errorf("draft: give it to the reply: %w", err)
	}
	return d, nil
}

// closeDraft removes the run's draft that no reply took (a silent run, a long reply). A
// reply's draft is never touched here.
func (c *Connector) closeDraft(ctx context.Context, root *actor.RootContext, session string) {
	d, ok := c.loadDraft(session)
	if !ok {
		return
	}
	del, isDel := c.ch.(channels.Deleter)
	if !d.legacy && isDel && d.id == "" && d.key != "" { // recorded, maybe sent: find it
		if found, err := c.newDraft(ctx, root, session, d, ""); err == nil {
			d = found
		}
	}
	if d.due && !d.legacy && d.id != "" {
		c.sweepStrays(ctx, d) // the record goes below
	}
	e, isEditor := c.editor()
	switch {
	case d.legacy || d.id == "": // nothing of ours that can be found again
	case isDel:
		if err := del.Delete(ctx, d.chat, d.id); err != nil {
			c.log.Debug().Err(err).Msg("draft not deleted")
		}
	case isEditor:
		e.Edit(ctx, d.chat, d.id, "✓")
	}
	if err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error { return tx.Delete(draftBucket, session) }); err != nil {
		c.log.Warn().Err(err).Str("session", session).Msg("draft record not removed")
	}
}
