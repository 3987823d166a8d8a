package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// sendProgress remembers the chunks of a reply already sent, so a Send the connector
// retries after a failure in the middle continues where it stopped instead of repeating.
type sendProgress struct {
	text string
	done int      // chunks sent
	ids  []string // their message ids
}

// maxProgress bounds the remembered replies (one per failed multi-chunk send).
const maxProgress = 256

// Send renders out.Text as Telegram HTML and sends it in as many messages as needed (each
// at most 4096 UTF-16 units), the first replying to out.ReplyToID, all in out.ThreadID's
// topic. It returns the ids ("<chat id>:<message id>") of the messages sent. A chunk
// Telegram cannot parse is sent again as plain text; 429 waits retry_after and tries again;
// a blocked bot, a missing chat or another refused request returns an error wrapping
// channels.ErrPermanent.
func (b *Bot) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	chat, err := parseChatID(out.ChatID)
	if err != nil {
		return nil, err
	}
	thread, _ := strconv.Atoi(out.ThreadID)
	replyTo := messageNumber(out.ReplyToID)
	chunks := channels.CapChunks(renderChunks(out.Text), out.MaxChunks, func(n int) chunk {
		note := channels.OmittedNote(n)
		return chunk{text: note, source: note}
	})
	key := ""
	if out.OutboxSeq != 0 {
		key = out.SessionKey + "/" + strconv.FormatUint(out.OutboxSeq, 10)
	}
	if strings.TrimSpace(out.Text) == "" && len(out.Media) > 0 {
		chunks = nil // only files
	}
	p := b.resume(key, out.Text)
	for i := p.done; i < len(chunks)+len(out.Media); i++ {
		reply := 0
		if i == 0 {
			reply = replyTo
		}
		var ids []string
		var err error
		if i < len(chunks) {
			ids, err = b.sendChunk(ctx, chat, thread, reply, chunks[i])
		} else if ids, err = b.sendFile(ctx, chat, thread, reply, out.Media[i-len(chunks)]); err != nil && errors.Is(err, channels.ErrMedia) {
			continue // sendFile told the chat
		}
		if err != nil {
			b.remember(key, p, err)
			return nil, err
		}
		p.done, p.ids = i+1, append(p.ids, ids...)
	}
	b.remember(key, p, nil)
	return p.ids, nil
}

// sendFile sends one file of a reply; one that cannot be sent gets a short note in the chat
// instead, and the error (wrapping channels.ErrMedia) is only logged.
func (b *Bot) sendFile(ctx context.Context, chat int64, thread, reply int, m messages.Media) ([]string, error) {
	id, err := b.sendMedia(ctx, chat, thread, reply, m)
	if err == nil {
		return []string{id}, nil
	}
	if !errors.Is(err, channels.ErrMedia) {
		return nil, err
	}
	b.log.Warn().Err(err).Int64("chat", chat).Msg("telegram: a reply's file was not sent")
	note := channels.MediaNote(m, err)
	if _, nerr := b.sendChunk(ctx, chat, thread, reply, chunk{text: note, source: note}); nerr != nil {
		return nil, nerr
	}
	return nil, err
}

// resume returns what an earlier attempt at the same reply sent.
func (b *Bot) resume(key, text string) *sendProgress {
	b.progressMu.Lock()
	defer b.progressMu.Unlock()
	if p := b.progress[key]; key != "" && p != nil && p.text == text {
		return p
	}
	return &sendProgress{text: text}
}

// remember keeps p for a retry after a transient failure, and forgets it otherwise.
func (b *Bot) remember(key string, p *sendProgress, err error) {
	if key == "" {
		return
	}
	b.progressMu.Lock()
	defer b.progressMu.Unlock()
	if err == nil || p.done == 0 || isPermanent(err) {
		delete(b.progress, key)
		return
	}
	if len(b.progress) >= maxProgress {
		for k := range b.progress {
			delete(b.progress, k)
			break
		}
	}
	b.progress[key] = p
}

// sendChunk sends one chunk, falling back to plain text when Telegram cannot parse it.
func (b *Bot) sendChunk(ctx context.Context, chat int64, thread, reply int, c chunk) ([]string, error) {
	params := &telego.SendMessageParams{ChatID: telego.ChatID{ID: chat}, MessageThreadID: thread, Text: c.text}
	if reply != 0 {
		params.ReplyParameters = &telego.ReplyParameters{MessageID: reply, AllowSendingWithoutReply: true}
	}
	if c.html {
		params.ParseMode = telego.ModeHTML
		id, err := b.sendMessage(ctx, params)
		if err == nil {
			return []string{id}, nil
		}
		if !isParseError(err) {
			return nil, err
		}
		b.log.Warn().Err(err).Int64("chat", chat).Msg("telegram: Telegram could not parse the rendered reply; sending it as plain text")
	}
	var ids []string
	for _, p := range plainChunks(c.source) {
		params.Text, params.ParseMode = p.text, ""
		id, err := b.sendMessage(ctx, params)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		params.ReplyParameters = nil
	}
	return ids, nil
}

func (b *Bot) sendMessage(ctx context.Context, params *telego.SendMessageParams) (string, error) {
	var msg *telego.Message
	err := b.call(ctx, "sendMessage", func(ctx context.Context) (err error) {
		msg, err = b.api.SendMessage(ctx, params)
		return err
	})
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(params.ChatID.ID, 10) + ":" + strconv.Itoa(msg.MessageID), nil
}

// Typing shows "typing…" in chatID for a few seconds.
func (b *Bot) Typing(ctx context.Context, chatID string) error {
	chat, err := parseChatID(chatID)
	if err != nil {
		return err
	}
	return b.call(ctx, "sendChatAction", func(ctx context.Context) error {
		return b.api.SendChatAction(ctx, &telego.SendChatActionParams{ChatID: telego.ChatID{ID: chat}, Action: telego.ChatActionTyping})
	})
}

// parseChatID reads a chat id as reef stores it (decimal).
func parseChatID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("telegram: chat id %q is not a Telegram chat id: %w", s, channels.ErrPermanent)
	}
	return id, nil
}

// messageNumber returns the Telegram message id of a reef message id ("<chat>:<id>",
// "<chat>:<id>:edit:<date>" or "<id>"), or 0.
func messageNumber(id string) int {
	parts := strings.Split(id, ":")
	if len(parts) >= 2 {
		n, _ := strconv.Atoi(parts[1])
		return n
	}
	n, _ := strconv.Atoi(id)
	return n
}
