package actors

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Drafts make replies idempotent on platforms that can edit messages. When a run starts, the
// Connector sends a short draft and records its id durably; the reply is delivered by editing
// the draft. If reef is killed after delivering a reply but before its outbox row is cleared,
// the reply is delivered again after the restart — as an edit to the same text, which
// changes nothing, instead of a second message. (Telegram has no idempotency key; marking a
// reply sent only after the platform accepted it always leaves that window.) A run that ends
// without a reply deletes its draft. Threads and topics get no draft: Editor and Deleter take
// only a chat id, which cannot name a message inside a thread on every platform.
//
// A draft is recorded before it is sent (with a key and no message id yet), and sent with
// that key as its idempotency key: on a platform that honours one (Feishu's uuid), a draft
// sent just before a kill is found again after the restart — sending it again returns the
// same message — so it is edited into the reply or deleted instead of left behind. Where the
// platform has no such key (Telegram, Discord), such a draft stays.

const (
	draftText    = "…"
	draftBucket  = "drafts" // session key → chat id + "\n" + platform message id ("" until sent) + "\n" + key
	draftMaxRune = 1900     // longer replies are sent as new messages (the smallest platform limit is 2000)
)

type draft struct{ chat, id, key string }

// record is a draft as draftBucket stores it.
func (d draft) record() []byte { return []byte(d.chat + "\n" + d.id + "\n" + d.key) }

func (c *Connector) editor() (channels.Editor, bool) {
	e, ok := c.ch.(channels.Editor)
	return e, ok
}

// loadDraft returns the recorded draft of a session, if any.
func (c *Connector) loadDraft(key string) (draft, bool) {
	var d draft
	var ok bool
	c.deps.Store.View(func(r persistence.Reader) error {
		v, found, err := r.Get(draftBucket, key)
		if err != nil || !found {
			return err
		}
		var rest string
		d.chat, rest, ok = strings.Cut(string(v), "\n")
		d.id, d.key, _ = strings.Cut(rest, "\n")
		return nil
	})
	return d, ok
}

// openDraft sends the draft for a run that started, showing text, unless the session
// already has one (a run re-run after a restart reuses it; one recorded but maybe not sent is
// sent again). It returns the draft's platform id ("" when there is none).
func (c *Connector) openDraft(ctx context.Context, root *actor.RootContext, ev *messages.TurnEvent, text string) string {
	if _, ok := c.editor(); !ok || ev.SessionKey == "" || ev.ThreadID != "" {
		return ""
	}
	d, ok := c.loadDraft(ev.SessionKey)
	if ok && d.chat == ev.ChatID && d.id != "" {
		return d.id
	}
	if !ok || d.chat != ev.ChatID {
		d = draft{}
	}
	d, err := c.newDraftText(ctx, root, ev.SessionKey, ev.ChatID, ev.ThreadID, d.key, text)
	if err != nil {
		c.log.Warn().Err(err).Str("chat", ev.ChatID).Bool("draft", true).Msg("send failed")
	}
	return d.id
}

// newDraft records a draft, sends it and records its id; only a recorded draft is ever
// edited. key, when set, is that of a draft recorded before and maybe sent: sending it again
// with the same key finds it where the platform honours idempotency keys.
func (c *Connector) newDraft(ctx context.Context, root *actor.RootContext, session, chat, thread, key string) (draft, error) {
	return c.newDraftText(ctx, root, session, chat, thread, key, draftText)
}

// newDraftText is newDraft with the draft showing text.
func (c *Connector) newDraftText(ctx context.Context, root *actor.RootContext, session, chat, thread, key, text string) (draft, error) {
	d := draft{chat: chat, key: key}
	if d.key == "" {
		d.key = strconv.FormatUint(rand.Uint64(), 36)
		err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error { return tx.Put(draftBucket, session, d.record()) })
		if err != nil {
			return draft{}, err
		}
	}
	ids, err := c.ch.Send(ctx, messages.Outbound{Channel: c.channel, Account: c.account, ChatID: chat, ThreadID: thread, Text: text,
		SessionKey: "draft:" + d.key, OutboxSeq: 1}) // the key the platform dedups by (Feishu: uuid)
	if err != nil {
		return draft{}, err
	}
	if len(ids) == 0 {
		return draft{}, errors.New("the platform returned no message id")
	}
	d.id = ids[0]
	err = writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error {
		return tx.Put(draftBucket, session, d.record())
	})
	return d, err
}

// deliverByEdit delivers out by editing the session's recorded draft, recording a new draft
// first when there is none (a reply re-sent after a crash, a draft that failed): the reply
// itself is then never a new message, so sending it again can only repeat an edit. It
// reports false when the reply must be sent as new messages (too long for one message, a
// quoted reply, or a draft cannot be made).
func (c *Connector) deliverByEdit(ctx context.Context, root *actor.RootContext, out *messages.Outbound) (bool, error) {
	e, ok := c.editor()
	if !ok || out.SessionKey == "" || out.ThreadID != "" {
		return false, nil
	}
	d, ok := c.loadDraft(out.SessionKey)
	if ok && d.chat != out.ChatID {
		ok, d = false, draft{}
	}
	// too long to fit, a quoted reply (an edit cannot make the draft one), or only files (no
	// text to edit in): replace the draft
	if out.Quote && out.ReplyToID != "" || utf8.RuneCountInString(out.Text) > draftMaxRune || out.Text == "" && len(out.Media) > 0 {
		if del, isDel := c.ch.(channels.Deleter); isDel && ok {
			if d.id == "" { // recorded, maybe sent: find it again (idempotency key) to delete it
				d, _ = c.newDraft(ctx, root, out.SessionKey, d.chat, out.ThreadID, d.key)
			}
			if d.id != "" {
				del.Delete(ctx, d.chat, d.id)
			}
		}
		return false, nil
	}
	if !ok || d.id == "" {
		var err error
		if d, err = c.newDraft(ctx, root, out.SessionKey, out.ChatID, out.ThreadID, d.key); err != nil {
			c.log.Warn().Err(err).Str("chat", out.ChatID).Bool("draft", true).Msg("send failed")
			return false, nil
		}
	}
	c.pace.wait(ctx, out.ChatID, c.deps.clock()) // a progress edit or the draft may have just gone
	err := e.Edit(ctx, out.ChatID, d.id, out.Text)
	c.pace.done(out.ChatID, c.deps.clock().Now())
	if errors.Is(err, channels.ErrPermanent) {
		// The draft cannot take the reply (deleted or recalled, past the platform's edit
		// window or edit count): send it anew, and take the draft away where possible.
		c.log.Info().Err(err).Str("chat", out.ChatID).Msg("draft not editable; the reply is sent as a new message")
		if del, isDel := c.ch.(channels.Deleter); isDel {
			if derr := del.Delete(ctx, d.chat, d.id); derr != nil {
				c.log.Debug().Err(derr).Msg("draft not deleted")
			}
		}
		return false, nil
	}
	if err == nil {
		c.sentIDs.note(out.ChatID, outKey(out), []string{d.id}) // the draft is the reply now (connector_edit.go)
	}
	return err == nil, err
}

// closeDraft removes a draft no reply consumed (a silent or long reply).
func (c *Connector) closeDraft(ctx context.Context, root *actor.RootContext, key string) {
	d, ok := c.loadDraft(key)
	if !ok {
		return
	}
	if _, isDel := c.ch.(channels.Deleter); isDel && d.id == "" { // recorded, maybe sent: find it
		if found, err := c.newDraft(ctx, root, key, d.chat, "", d.key); err == nil {
			d = found
		}
	}
	del, isDel := c.ch.(channels.Deleter)
	e, isEditor := c.editor()
	switch {
	case d.id == "": // nothing sent that can be found again
	case isDel:
		if err := del.Delete(ctx, d.chat, d.id); err != nil {
			c.log.Debug().Err(err).Msg("draft not deleted")
		}
	case isEditor:
		e.Edit(ctx, d.chat, d.id, "✓")
	}
	if err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error { return tx.Delete(draftBucket, key) }); err != nil {
		c.log.Warn().Err(err).Str("session", key).Msg("draft record not removed")
	}
}
