package telegram

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/mymmrac/telego"
	ta "github.com/mymmrac/telego/telegoapi"

	"github.com/reefgw/reef/channels"
)

// Run connects to Telegram and delivers updates until ctx ends. It returns nil when ctx
// ended, an error wrapping channels.ErrAuth when Telegram refused the token, and another
// error when the connection kept failing or another poller or a webhook holds the bot.
func (b *Bot) Run(ctx context.Context, deliver channels.Deliver) error {
	err := b.run(ctx, deliver)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (b *Bot) run(ctx context.Context, deliver channels.Deliver) error {
	if b.cfg.Mode == ModeWebhook {
		if err := b.getMe(ctx); err != nil {
			return err
		}
		return b.runWebhook(ctx, deliver)
	}
	// getMe and deleteWebhook do not depend on each other: both at once spare the first poll
	// a round trip to Telegram.
	hook := make(chan error, 1)
	go func() {
		callCtx, cancel := context.WithTimeout(ctx, b.timing.callTimeout)
		defer cancel()
		hook <- b.api.DeleteWebhook(callCtx, &telego.DeleteWebhookParams{})
	}()
	errMe := b.getMe(ctx)
	errHook := <-hook
	if errMe != nil {
		return errMe
	}
	if errHook != nil {
		return b.apiError("deleteWebhook", errHook)
	}
	return b.poll(ctx, deliver)
}

// getMe learns who the bot is (its username, for mentions in groups).
func (b *Bot) getMe(ctx context.Context) error {
	callCtx, cancel := context.WithTimeout(ctx, b.timing.callTimeout)
	me, err := b.api.GetMe(callCtx)
	cancel()
	if err != nil {
		return b.apiError("getMe", err)
	}
	b.self.Store(me)
	b.log.Info().Str("bot", me.Username).Int64("botId", me.ID).Str("mode", b.cfg.Mode).Msg("telegram connected")
	return nil
}

// poll long-polls getUpdates. The offset moves past an update only once deliver accepted
// it (or it is one reef ignores); when deliver fails, the rest of the batch is left and
// fetched again after a pause, so the refused update is delivered again.
func (b *Bot) poll(ctx context.Context, deliver channels.Deliver) error {
	failures := 0
	refused := 0
	timeout := max(int(b.cfg.PollTimeout/time.Second), 1)
	for ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, b.cfg.PollTimeout+b.timing.callTimeout)
		updates, err := b.api.GetUpdates(pollCtx, &telego.GetUpdatesParams{
			Offset: int(b.offset.Load()), Timeout: timeout, AllowedUpdates: allowedUpdates,
		})
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			failures++
			wait, again := b.pollFailed(err, failures)
			sleep(ctx, wait)
			if ctx.Err() != nil {
				return nil
			}
			if !again {
				return b.apiError("getUpdates", err)
			}
			continue
		}
		failures = 0
		errs := b.deliverBatch(ctx, deliver, updates)
		for i := range updates {
			u := &updates[i]
			if err := errs[i]; err != nil {
				if ctx.Err() != nil {
					return nil
				}
				refused++
				wait := b.backoff(refused)
				b.log.Warn().Err(err).Int("update", u.UpdateID).Dur("retryIn", wait).Msg("telegram: update not accepted; it will be delivered again")
				sleep(ctx, wait)
				break
			}
			refused = 0
			b.offset.Store(int64(u.UpdateID) + 1)
		}
	}
	return nil
}

// deliverBatch delivers a batch of updates, chats concurrently and each chat's updates in
// order, so one poll's updates share Storage's group commits instead of waiting for one
// fsync each. It returns each update's error; after a failure the chat's later updates are
// not attempted (errNotAttempted), so the offset stops at the first refused update and
// everything after it is fetched again (the connector drops what it had already accepted).
func (b *Bot) deliverBatch(ctx context.Context, deliver channels.Deliver, updates []telego.Update) []error {
	errs := make([]error, len(updates))
	if len(updates) == 1 {
		errs[0] = b.deliverUpdate(ctx, deliver, &updates[0])
		return errs
	}
	byChat := map[int64][]int{}
	var order []int64
	for i := range updates {
		chat := updateChat(&updates[i])
		if _, ok := byChat[chat]; !ok {
			order = append(order, chat)
		}
		byChat[chat] = append(byChat[chat], i)
	}
	var wg sync.WaitGroup
	for _, chat := range order {
		wg.Add(1)
		go func(idx []int) {
			defer wg.Done()
			for n, i := range idx {
				if errs[i] = b.deliverUpdate(ctx, deliver, &updates[i]); errs[i] != nil {
					for _, j := range idx[n+1:] {
						errs[j] = errNotAttempted
					}
					return
				}
			}
		}(byChat[chat])
	}
	wg.Wait()
	return errs
}

var errNotAttempted = errors.New("telegram: not attempted after an earlier update of the same chat was refused")

// updateChat is the chat an update belongs to (0 for kinds without one).
func updateChat(u *telego.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.ID
	}
	return 0
}

// deliverUpdate delivers u if reef handles its kind.
func (b *Bot) deliverUpdate(ctx context.Context, deliver channels.Deliver, u *telego.Update) error {
	in, ok := b.inbound(u)
	if !ok {
		b.log.Debug().Int("update", u.UpdateID).Msg("telegram: update ignored")
		return nil
	}
	return deliver(ctx, in)
}

// pollFailed decides whether a failed getUpdates is tried again within Run, and after how
// long. Conflicts, refused tokens and repeated failures end Run (the connector restarts it
// with backoff, or stops on ErrAuth).
func (b *Bot) pollFailed(err error, failures int) (time.Duration, bool) {
	var apiErr *ta.Error
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case http.StatusConflict:
			b.log.Error().Str("description", apiErr.Description).Dur("retryIn", b.timing.conflictWait).
				Msg("telegram: another getUpdates poller or a webhook is active for this bot token; stop the other reef instance or bot using this token (or set mode: webhook)")
			return b.timing.conflictWait, false
		case http.StatusUnauthorized:
			return 0, false
		case http.StatusTooManyRequests:
			if apiErr.Parameters != nil && apiErr.Parameters.RetryAfter > 0 {
				return time.Duration(apiErr.Parameters.RetryAfter) * time.Second, true
			}
		}
	}
	if failures >= b.timing.maxPollFailures {
		return 0, false
	}
	wait := b.backoff(failures)
	b.log.Warn().Err(err).Int("failures", failures).Dur("retryIn", wait).Msg("telegram: getUpdates failed")
	return wait, true
}

// apiError wraps a failed call as Run's error: ErrAuth for a refused token; after a
// conflict, Run first waits so the connector's restart does not fight the other poller.
func (b *Bot) apiError(method string, err error) error {
	var apiErr *ta.Error
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case http.StatusUnauthorized:
			return fmt.Errorf("telegram: %s: the bot token was refused (%s): %w", method, apiErr.Description, channels.ErrAuth)
		case http.StatusConflict:
			return fmt.Errorf("telegram: %s: conflict, another poller or a webhook is active: %s", method, apiErr.Description)
		}
	}
	return fmt.Errorf("telegram: %s: %w", method, err)
}

// backoff is the wait before attempt n+1: doubling from retryMin to retryMax, with jitter.
func (b *Bot) backoff(n int) time.Duration {
	d := b.timing.retryMin
	for i := 1; i < n && d < b.timing.retryMax; i++ {
		d *= 2
	}
	d = min(d, b.timing.retryMax)
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
