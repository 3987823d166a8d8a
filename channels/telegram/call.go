package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mymmrac/telego"
	ta "github.com/mymmrac/telego/telegoapi"

	"github.com/reefgw/reef/channels"
)

// maxRateLimited bounds how often one call waits for retry_after before giving up.
const maxRateLimited = 5

// call runs one Bot API call with a timeout, waiting out 429 Too Many Requests for as long as
// Telegram asks (or until ctx ends), and classifies the failure.
func (b *Bot) call(ctx context.Context, method string, fn func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, b.timing.callTimeout)
		err := fn(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		wait, limited := retryAfter(err)
		if !limited || attempt >= maxRateLimited || ctx.Err() != nil {
			return callError(method, err)
		}
		b.log.Warn().Str("method", method).Str("retryAfter", wait.Round(time.Millisecond).String()).Msg("telegram: rate limited; waiting")
		sleep(ctx, wait)
		if ctx.Err() != nil {
			return fmt.Errorf("telegram: %s: rate limited, then cancelled: %w", method, ctx.Err())
		}
	}
}

// retryAfter reports whether err is a 429 and how long Telegram asked to wait.
func retryAfter(err error) (time.Duration, bool) {
	var apiErr *ta.Error
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != http.StatusTooManyRequests {
		return 0, false
	}
	wait := time.Second
	if apiErr.Parameters != nil && apiErr.Parameters.RetryAfter > 0 {
		wait = time.Duration(apiErr.Parameters.RetryAfter) * time.Second
	}
	return wait, true
}

// callError wraps a failed call: 401 wraps channels.ErrAuth; 403 (blocked, kicked) and 400
// (chat not found, bad request: sending it again cannot help) wrap channels.ErrPermanent.
// The *ta.Error stays reachable with errors.As.
func callError(method string, err error) error {
	var apiErr *ta.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("telegram: %s: %w", method, err)
	}
	msg := fmt.Sprintf("telegram: %s: %s (%d)", method, apiErr.Description, apiErr.ErrorCode)
	switch apiErr.ErrorCode {
	case http.StatusUnauthorized:
		return &refusal{msg: msg, errs: []error{channels.ErrAuth, apiErr}}
	case http.StatusForbidden, http.StatusBadRequest:
		return &refusal{msg: msg, errs: []error{channels.ErrPermanent, apiErr}}
	}
	return &refusal{msg: msg, errs: []error{apiErr}}
}

// refusal is an error Telegram answered, matching its sentinel and the *ta.Error.
type refusal struct {
	msg  string
	errs []error
}

func (e *refusal) Error() string   { return e.msg }
func (e *refusal) Unwrap() []error { return e.errs }

// HTTPStatus is the status Telegram answered (explain.StatusCoder).
func (e *refusal) HTTPStatus() int {
	for _, err := range e.errs {
		var apiErr *ta.Error
		if errors.As(err, &apiErr) {
			return apiErr.ErrorCode
		}
	}
	return 0
}

func isPermanent(err error) bool { return errors.Is(err, channels.ErrPermanent) }

// isParseError reports whether Telegram refused a text because it could not parse its
// entities (the HTML).
func isParseError(err error) bool {
	return hasDescription(err, http.StatusBadRequest, "can't parse entities")
}

func hasDescription(err error, code int, part string) bool {
	var apiErr *ta.Error
	return errors.As(err, &apiErr) && apiErr.ErrorCode == code &&
		strings.Contains(strings.ToLower(apiErr.Description), part)
}

// Edit replaces the text of a message the bot sent. messageID is an id Send returned
// ("<chat id>:<message id>") or a bare message id. Text is rendered like Send's; only what
// fits one message is kept. An unchanged text is not an error.
func (b *Bot) Edit(ctx context.Context, chatID, messageID, text string) error {
	chat, err := parseChatID(chatID)
	if err != nil {
		return err
	}
	id := messageNumber(messageID)
	if id == 0 {
		return fmt.Errorf("telegram: edit: message id %q is not a Telegram message id: %w", messageID, channels.ErrPermanent)
	}
	chunks := renderChunks(text)
	if len(chunks) == 0 {
		return fmt.Errorf("telegram: edit: empty text: %w", channels.ErrPermanent)
	}
	c := chunks[0]
	params := &telego.EditMessageTextParams{ChatID: telego.ChatID{ID: chat}, MessageID: id, Text: c.text}
	if c.html {
		params.ParseMode = telego.ModeHTML
	}
	edit := func(ctx context.Context) error {
		_, err := b.api.EditMessageText(ctx, params)
		return err
	}
	err = b.call(ctx, "editMessageText", edit)
	if c.html && isParseError(err) {
		params.Text, params.ParseMode = plainChunks(c.source)[0].text, ""
		err = b.call(ctx, "editMessageText", edit)
	}
	if hasDescription(err, http.StatusBadRequest, "message is not modified") {
		return nil
	}
	return err
}

// Delete removes a message the bot sent. A message already gone is not an error.
func (b *Bot) Delete(ctx context.Context, chatID, messageID string) error {
	chat, err := parseChatID(chatID)
	if err != nil {
		return err
	}
	id := messageNumber(messageID)
	if id == 0 {
		return fmt.Errorf("telegram: delete: message id %q is not a Telegram message id: %w", messageID, channels.ErrPermanent)
	}
	err = b.call(ctx, "deleteMessage", func(ctx context.Context) error {
		return b.api.DeleteMessage(ctx, &telego.DeleteMessageParams{ChatID: telego.ChatID{ID: chat}, MessageID: id})
	})
	if hasDescription(err, http.StatusBadRequest, "message to delete not found") {
		return nil
	}
	return err
}

// React sets the bot's reaction on a message of chatID (setMessageReaction): one emoji, of
// those Telegram allows for reactions; an empty emoji removes the bot's reaction.
func (b *Bot) React(ctx context.Context, chatID, messageID, emoji string) error {
	chat, err := parseChatID(chatID)
	if err != nil {
		return err
	}
	id := messageNumber(messageID)
	if id == 0 {
		return fmt.Errorf("telegram: react: message id %q is not a Telegram message id: %w", messageID, channels.ErrPermanent)
	}
	params := &telego.SetMessageReactionParams{ChatID: telego.ChatID{ID: chat}, MessageID: id, Reaction: []telego.ReactionType{}}
	if emoji != "" {
		params.Reaction = []telego.ReactionType{&telego.ReactionTypeEmoji{Type: telego.ReactionEmoji, Emoji: emoji}}
	}
	return b.call(ctx, "setMessageReaction", func(ctx context.Context) error {
		return b.api.SetMessageReaction(ctx, params)
	})
}
