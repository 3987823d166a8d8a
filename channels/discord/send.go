package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// MaxMessage is Discord's message length limit, in code points.
const MaxMessage = 2000

// maxRateLimitRetries bounds how often one REST call is retried after 429.
const maxRateLimitRetries = 5

// Send delivers out as one or more messages of at most MaxMessage characters, code fences
// balanced in each. The first chunk replies to out.ReplyToID (if that message is gone, it is
// sent as a plain message). With out.ThreadID set, it goes to the thread. It returns the
// ids of the messages created; on a failure part way, the ids sent so far and the error.
// Each chunk of an outbox row carries a nonce derived from the row, enforced: a Send
// repeated after a crash does not double chunks Discord already has.
func (b *Bot) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	target := out.ChatID
	if out.ThreadID != "" {
		target = out.ThreadID
	}
	if target == "" {
		return nil, b.errorf([]error{channels.ErrPermanent}, "discord: send: no channel id")
	}
	var ids []string
	chunks := channels.CapChunks(Chunks(out.Text), out.MaxChunks, channels.OmittedNote)
	if strings.TrimSpace(out.Text) == "" {
		chunks = nil
	}
	for i, chunk := range chunks {
		msg := &messageSend{MessageSend: discordgo.MessageSend{Content: chunk, AllowedMentions: allowedMentions()}}
		if i == 0 && out.ReplyToID != "" {
			no := false
			msg.Reference = &discordgo.MessageReference{MessageID: out.ReplyToID, ChannelID: target, FailIfNotExists: &no}
		}
		id, err := b.post(ctx, target, out, i, msg, nil)
		if err != nil {
			return ids, b.apiError("send", err)
		}
		ids = append(ids, id)
	}
	if len(out.Media) > 0 { // the files follow the text (media.go)
		more, err := b.sendFiles(ctx, target, out, len(chunks) == 0)
		return append(ids, more...), err
	}
	return ids, nil
}

// post creates part `part` of out (a text chunk, or a message of files when files is not
// nil) in target, unless an earlier Send of the same outbox row delivered it: then it
// returns that message's id. The part carries the row's enforced nonce.
func (b *Bot) post(ctx context.Context, target string, out messages.Outbound, part int, msg *messageSend, files []*discordgo.File) (string, error) {
	if out.OutboxSeq != 0 {
		msg.Nonce, msg.EnforceNonce = nonce(out.SessionKey, out.OutboxSeq, part), true
	}
	if id, ok := b.delivered.get(msg.Nonce); ok {
		return id, nil
	}
	contentType, body := "application/json", []byte(nil)
	var err error
	if files != nil {
		contentType, body, err = discordgo.MultipartBodyWithJSON(msg, files)
	} else {
		body, err = json.Marshal(msg)
	}
	if err != nil {
		return "", fmt.Errorf("discord: send: %w", err)
	}
	m, err := call(ctx, b, func(opts ...discordgo.RequestOption) (*discordgo.Message, error) {
		endpoint := discordgo.EndpointChannelMessages(target)
		raw, err := b.rest.RequestRaw(http.MethodPost, endpoint, contentType, body, endpoint, 0, opts...)
		if err != nil {
			return nil, err
		}
		var m discordgo.Message
		return &m, json.Unmarshal(raw, &m)
	})
	if err != nil {
		return "", err
	}
	b.delivered.put(msg.Nonce, m.ID)
	return m.ID, nil
}

// messageSend is discordgo's MessageSend with the idempotency fields it lacks (v0.29.0):
// with enforce_nonce, Discord answers a send whose nonce it saw from the bot in the last few
// minutes with the message it created then, instead of a second one.
type messageSend struct {
	discordgo.MessageSend
	Nonce        string `json:"nonce,omitempty"`
	EnforceNonce bool   `json:"enforce_nonce,omitempty"`
}

// nonce is the idempotency key of chunk i of an outbox row (at most 25 characters).
func nonce(session string, seq uint64, i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", session, seq, i)))
	return hex.EncodeToString(sum[:])[:25]
}

// allowedMentions is the mention policy of every send and edit: never let model output ping
// @everyone, @here or roles.
func allowedMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{
		Parse:       []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers},
		RepliedUser: true,
	}
}

// Chunks cuts text into messages Discord accepts: at most MaxMessage code points each, never
// inside a grapheme, each code fence closed and reopened across chunks. Blank text yields none.
func Chunks(text string) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	// Without fences cut across, the full limit is usable; otherwise leave room for the
	// fence lines BalanceFences adds.
	if chunks := channels.BalanceFences(channels.Split(text, MaxMessage, channels.Runes)); fits(chunks) {
		return chunks
	}
	reserve := channels.FenceReserve
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimLeft(line, " "); strings.HasPrefix(t, "```") {
			reserve = max(reserve, channels.FenceReserve+channels.Runes(t))
		}
	}
	if reserve < MaxMessage/2 {
		if chunks := channels.BalanceFences(channels.Split(text, MaxMessage-reserve, channels.Runes)); fits(chunks) {
			return chunks
		}
	}
	return channels.Split(text, MaxMessage, channels.Runes) // absurd fence lines: give up balancing
}

func fits(chunks []string) bool {
	for _, c := range chunks {
		if channels.Runes(c) > MaxMessage {
			return false
		}
	}
	return true
}

// Edit replaces the text of message messageID in channel chatID (truncated to MaxMessage),
// with the same allowed_mentions as Send: without them an edit may ping.
func (b *Bot) Edit(ctx context.Context, chatID, messageID, text string) error {
	if chunks := channels.Split(text, MaxMessage, channels.Runes); len(chunks) > 0 {
		text = chunks[0]
	}
	edit := &discordgo.MessageEdit{ID: messageID, Channel: chatID, Content: &text, AllowedMentions: allowedMentions()}
	_, err := call(ctx, b, func(opts ...discordgo.RequestOption) (*discordgo.Message, error) {
		return b.rest.ChannelMessageEditComplex(edit, opts...)
	})
	return b.apiError("edit", err)
}

// Delete deletes message messageID of channel chatID; a message already gone counts as deleted.
func (b *Bot) Delete(ctx context.Context, chatID, messageID string) error {
	_, err := call(ctx, b, func(opts ...discordgo.RequestOption) (struct{}, error) {
		return struct{}{}, b.rest.ChannelMessageDelete(chatID, messageID, opts...)
	})
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusNotFound {
		return nil
	}
	return b.apiError("delete", err)
}

// React adds the bot's reaction (a Unicode emoji) to a message of chatID.
func (b *Bot) React(ctx context.Context, chatID, messageID, emoji string) error {
	if emoji == "" {
		return fmt.Errorf("discord: react: no emoji: %w", channels.ErrPermanent)
	}
	_, err := call(ctx, b, func(opts ...discordgo.RequestOption) (struct{}, error) {
		return struct{}{}, b.rest.MessageReactionAdd(chatID, messageID, emoji, opts...)
	})
	return b.apiError("react", err)
}

// TypingInThread shows the typing indicator in the thread (a channel of its own on Discord).
func (b *Bot) TypingInThread(ctx context.Context, chatID, threadID string) error {
	if threadID == "" {
		threadID = chatID
	}
	return b.Typing(ctx, threadID)
}

// Typing shows the typing indicator in chatID (for about ten seconds).
func (b *Bot) Typing(ctx context.Context, chatID string) error {
	_, err := call(ctx, b, func(opts ...discordgo.RequestOption) (struct{}, error) {
		return struct{}{}, b.rest.ChannelTyping(chatID, opts...)
	})
	return b.apiError("typing", err)
}

// call runs one REST request bounded by ctx, retrying after 429 as Discord's retry_after
// says. discordgo's rate limiter may sleep without looking at ctx: the request then runs on
// in its goroutine, and call returns when ctx ends.
func call[T any](ctx context.Context, b *Bot, f func(...discordgo.RequestOption) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	var zero T
	for attempt := 0; ; attempt++ {
		done := make(chan result, 1)
		go func() {
			v, err := f(discordgo.WithContext(ctx))
			done <- result{v, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
		var rl *discordgo.RateLimitError
		if r.err == nil || !errors.As(r.err, &rl) || attempt >= maxRateLimitRetries {
			return r.v, r.err
		}
		wait := max(rl.RetryAfter, 10*time.Millisecond)
		b.log.Warn().Str("retryAfter", wait.Round(time.Millisecond).String()).Msg("discord: rate limited")
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// apiError turns a discordgo error into a redacted one that wraps channels.ErrPermanent when
// Discord refused for good (400, 403, 404), channels.ErrAuth on 401, and ctx's error.
func (b *Bot) apiError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return b.errorf([]error{err}, "discord: %s: %v", op, err)
	}
	var rest *discordgo.RESTError
	if !errors.As(err, &rest) || rest.Response == nil {
		var rl *discordgo.RateLimitError
		if errors.As(err, &rl) {
			return b.errorf(nil, "discord: %s: still rate limited after %d retries", op, maxRateLimitRetries)
		}
		return b.errorf(nil, "discord: %s: %v", op, err)
	}
	status, code, text := rest.Response.StatusCode, 0, strings.TrimSpace(string(rest.ResponseBody))
	if rest.Message != nil {
		code, text = rest.Message.Code, rest.Message.Message
	}
	if r := []rune(text); len(r) > 200 {
		text = string(r[:200]) + "…"
	}
	var kinds []error
	switch status {
	case http.StatusUnauthorized:
		kinds = []error{channels.ErrAuth}
		text += "; check the bot token"
	case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		kinds = []error{channels.ErrPermanent}
	}
	return b.errorf(kinds, "discord: %s: HTTP %d (code %d): %s", op, status, code, text)
}
