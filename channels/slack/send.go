package slack

import (
	"context"
	"errors"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// MaxMessage is the longest mrkdwn text Send puts in one message: Slack recommends at most
// 4,000 characters (it truncates past 40,000, MaxText).
const MaxMessage = 4000

// MaxText is the longest text Slack takes in one message.
const MaxText = 40000

// sourceChunk is how much Markdown Send renders into one message before it checks the
// rendered length (escaping and links make mrkdwn longer than its source).
const sourceChunk = 3500

// permanentErrors are the Web API errors after which sending again will not help.
var permanentErrors = map[string]bool{
	"channel_not_found": true, "not_in_channel": true, "is_archived": true, "msg_too_long": true,
	"no_text": true, "cannot_dm_bot": true, "user_disabled": true, "restricted_action": true,
	"message_not_found": true, "cant_update_message": true, "cant_delete_message": true,
	"edit_window_closed": true, "invalid_blocks": true, "missing_scope": true,
}

// Chunks renders a reply into the mrkdwn messages Send would send, each at most MaxMessage
// characters: the Markdown is split first (never inside a rune or across a code fence, which
// BalanceFences closes and reopens), then each part rendered.
func Chunks(text string) []string {
	return renderChunks(text, sourceChunk)
}

func renderChunks(text string, limit int) []string {
	var out []string
	for _, part := range channels.BalanceFences(channels.Split(text, limit, channels.Runes)) {
		r := Mrkdwn(part)
		if channels.Runes(r) > MaxMessage && limit > 200 {
			out = append(out, renderChunks(part, limit/2)...)
			continue
		}
		if strings.TrimSpace(r) != "" {
			out = append(out, r)
		}
	}
	return out
}

// threadOf is where a reply goes: the chat's thread, or for a quoted reply the thread of
// the message it answers ([[reply_to_current]]).
func threadOf(out messages.Outbound) string {
	if out.ThreadID != "" {
		return out.ThreadID
	}
	if out.Quote {
		return out.ReplyToID
	}
	return ""
}

// Send posts a reply, chunked, into its thread; then its files (media.go). It returns the ts
// of each message. A stored reply's messages carry metadata naming it, and one that may be
// on Slack already is looked for first: its chunks found are not posted again (once.go).
func (b *Bot) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	thread := threadOf(out)
	chunks := channels.CapChunks(Chunks(out.Text), out.MaxChunks, channels.OmittedNote)
	row := rowOf(out)
	var have map[int]string
	if row != "" && (out.Resent || b.maybe.has(row)) {
		var err error
		if have, err = b.findSent(ctx, out, thread, row); err != nil {
			return nil, err
		}
	}
	var ids []string
	for i, c := range chunks {
		if ts, ok := have[i]; ok {
			ids = append(ids, ts)
			continue
		}
		var blocks []slackapi.Block
		if i == len(chunks)-1 {
			blocks = b.choiceBlocks(c, out.Choices)
		}
		ts, err := b.post(ctx, out.ChatID, thread, c, row, i, len(chunks), blocks...)
		if err != nil {
			if row != "" && (len(ids) > 0 || unclear(err)) {
				b.maybe.mark(row) // the next Send looks before it posts
			}
			return ids, err
		}
		ids = append(ids, ts)
	}
	if row != "" {
		b.maybe.clear(row)
	}
	more, err := b.sendMedia(ctx, out, thread)
	ids = append(ids, more...)
	if thread != "" {
		b.seen.add([]string{"t:" + out.ChatID + ":" + thread})
	}
	return ids, err
}

// post sends one mrkdwn message (with blocks, when given) and returns its ts; a chunk of a
// stored reply (row) carries metadata naming it.
func (b *Bot) post(ctx context.Context, chatID, thread, text, row string, part, parts int, blocks ...slackapi.Block) (string, error) {
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(text, false), slackapi.MsgOptionDisableLinkUnfurl()}
	if len(blocks) > 0 { // the text stays, for notifications and clients without blocks
		opts = append(opts, slackapi.MsgOptionBlocks(blocks...))
	}
	if thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(thread))
	}
	if row != "" {
		opts = append(opts, slackapi.MsgOptionMetadata(metadataOf(row, part, parts)))
	}
	var ts string
	err := b.call(ctx, "chat.postMessage", func() error {
		var err error
		_, ts, err = b.api.PostMessageContext(ctx, chatID, opts...)
		return err
	})
	return ts, err
}

// Edit replaces the text of a message the bot sent (chat.update), cut to one message.
func (b *Bot) Edit(ctx context.Context, chatID, messageID, text string) error {
	chunks := Chunks(text)
	if len(chunks) == 0 {
		return nil
	}
	return b.call(ctx, "chat.update", func() error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, chatID, messageID, slackapi.MsgOptionText(chunks[0], false))
		return err
	})
}

// Delete removes a message the bot sent (chat.delete).
func (b *Bot) Delete(ctx context.Context, chatID, messageID string) error {
	return b.call(ctx, "chat.delete", func() error {
		_, _, err := b.api.DeleteMessageContext(ctx, chatID, messageID)
		return err
	})
}

// React adds the bot's reaction to a message (reactions.add); emoji is a name ("eyes") or
// ":eyes:".
func (b *Bot) React(ctx context.Context, chatID, messageID, emoji string) error {
	name := strings.Trim(emoji, ":")
	if name == "" {
		return nil
	}
	err := b.call(ctx, "reactions.add", func() error {
		return b.api.AddReactionContext(ctx, name, slackapi.NewRefToMessage(chatID, messageID))
	})
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) && se.Err == "already_reacted" {
		return nil
	}
	return err
}

// Typing shows nothing: a Slack bot has no typing indicator outside assistant threads
// (TypingInThread).
func (b *Bot) Typing(context.Context, string) error { return nil }

// TypingInThread sets the assistant thread status ("is thinking…"), which Slack shows under
// the thread until the bot's next reply. Apps without the Agents & AI Apps feature (scope
// assistant:write) get an error, which is ignored.
func (b *Bot) TypingInThread(ctx context.Context, chatID, threadID string) error {
	if threadID == "" {
		return nil
	}
	err := b.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{
		ChannelID: chatID, ThreadTS: threadID, Status: "is thinking…"})
	if err != nil {
		b.log.Debug().Err(b.apiError("assistant.threads.setStatus", err)).Msg("slack: no thread status")
	}
	return nil
}

// rateLimitTries bounds how often one call waits out a 429.
const rateLimitTries = 5

// call runs one Web API call, waiting out Slack's 429s (Retry-After, at most maxRetryWait
// each) while ctx allows. Errors come back redacted; refusals that will not change wrap
// channels.ErrPermanent, rejected credentials channels.ErrAuth.
func (b *Bot) call(ctx context.Context, op string, fn func() error) error {
	for try := 1; ; try++ {
		err := fn()
		if err == nil {
			return nil
		}
		var rl *slackapi.RateLimitedError
		if !errors.As(err, &rl) || try == rateLimitTries || rl.RetryAfter > b.maxRetryWait {
			return b.sendError(op, err)
		}
		wait := max(rl.RetryAfter, 100*time.Millisecond)
		b.log.Debug().Str("method", op).Str("retry_after", wait.Round(time.Millisecond).String()).Msg("slack: rate limited")
		select {
		case <-ctx.Done():
			return b.sendError(op, ctx.Err())
		case <-time.After(wait):
		}
	}
}

func (b *Bot) sendError(op string, err error) error {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) && permanentErrors[se.Err] {
		return b.errorf([]error{channels.ErrPermanent}, "slack: %s: %s", op, se.Err)
	}
	return b.apiError(op, err)
}
