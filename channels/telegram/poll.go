package telegram

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/mymmrac/telego"
	ta "github.com/mymmrac/telego/telegoapi"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Run connects to Telegram and delivers updates until ctx ends. It returns nil when ctx
// ended, an error wrapping channels.ErrAuth when Telegram refused the token, and another
// error when the connection kept failing or another poller or a webhook holds the bot.
func (b *Bot) Run(ctx context.Context, deliver channels.Deliver) error {
	return b.RunBatches(ctx, channels.Concurrently(deliver))
}

// RunBatches is Run delivering each getUpdates answer as one batch.
func (b *Bot) RunBatches(ctx context.Context, deliver channels.DeliverAll) error {
	err := b.run(ctx, deliver)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (b *Bot) run(ctx context.Context, deliver channels.DeliverAll) error {
	if b.cfg.Mode == ModeWebhook {
		if err := b.getMe(ctx); err != nil {
			return err
		}
		return b.runWebhook(ctx, deliver)
	}
	// In a cluster only the node that holds the bot's inbound loop polls (a second poller
	// would get 409 Conflict); every node sends. A node waiting for the loop learns first
	// that the bot is reachable, so it shows as connected (it sends) and /readyz says ready.
	if b.cfg.Gate != nil {
		if err := b.getMe(ctx); err != nil {
			return err
		}
	}
	return channels.Gated(ctx, b.cfg.Gate, channels.InboundWork("telegram", b.cfg.Account), func(ctx context.Context) error {
		return b.startPolling(ctx, deliver)
	})
}

// startPolling learns who the bot is, takes the bot off any webhook, and polls.
func (b *Bot) startPolling(ctx context.Context, deliver channels.DeliverAll) error {
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
	b.callReachable()
	b.log.Info().Str("bot", me.Username).Int64("botId", me.ID).Str("mode", b.cfg.Mode).Msg("telegram connected")
	return nil
}

// poll long-polls getUpdates. The offset moves past an update only once deliver accepted
// it (or it is one reef ignores); when deliver fails, the rest of the batch is left and
// fetched again after a pause, so the refused update is delivered again.
func (b *Bot) poll(ctx context.Context, deliver channels.DeliverAll) error {
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
			if fn := b.unreachable.Load(); again && fn != nil && *fn != nil {
				(*fn)(b.apiError("getUpdates", err), wait)
			}
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
		b.callReachable()
		errs := b.deliverBatch(ctx, deliver, updates)
		for i := range updates {
			u := &updates[i]
			if err := errs[i]; err != nil {
				if ctx.Err() != nil {
					return nil
				}
				refused++
				wait := b.backoff(refused)
				b.log.Warn().Err(err).Int("update", u.UpdateID).Str("retryIn", wait.Round(time.Millisecond).String()).Msg("telegram: update not accepted; it will be delivered again")
				sleep(ctx, wait)
				break
			}
			refused = 0
			b.offset.Store(int64(u.UpdateID) + 1)
		}
	}
	return nil
}

// deliverBatch delivers a batch of updates at once (one write to disk) and returns each
// update's error. Updates of kinds reef ignores are accepted as they are.
func (b *Bot) deliverBatch(ctx context.Context, deliver channels.DeliverAll, updates []telego.Update) []error {
	errs := make([]error, len(updates))
	ins := make([]messages.Inbound, 0, len(updates))
	idx := make([]int, 0, len(updates))
	for i := range updates {
		in, ok := b.inbound(&updates[i])
		if !ok {
			b.log.Debug().Int("update", updates[i].UpdateID).Msg("telegram: update ignored")
			continue
		}
		ins, idx = append(ins, in), append(idx, i)
	}
	if len(ins) == 0 {
		return errs
	}
	for j, err := range deliver(ctx, ins) {
		errs[idx[j]] = err
	}
	return errs
}

// pollFailed decides whether a failed getUpdates is tried again within Run, and after how
// long. Conflicts, refused tokens and repeated failures end Run (the connector restarts it
// with backoff, or stops on ErrAuth).
func (b *Bot) pollFailed(err error, failures int) (time.Duration, bool) {
	var apiErr *ta.Error
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case http.StatusConflict:
			b.log.Error().Str("description", apiErr.Description).Str("retryIn", b.timing.conflictWait.String()).
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
	b.log.Warn().Err(err).Int("failures", failures).Str("retryIn", wait.Round(time.Millisecond).String()).Msg("telegram: getUpdates failed")
	return wait, true
}

// apiError wraps a failed call as Run's error: ErrAuth for a refused token; after a
// conflict, Run first waits so the connector's restart does not fight the other poller.
func (b *Bot) apiError(method string, err error) error {
	var apiErr *ta.Error
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case http.StatusUnauthorized:
			return &refusal{msg: fmt.Sprintf("telegram: %s: the bot token was refused (%s): %v", method, apiErr.Description, channels.ErrAuth),
				errs: []error{channels.ErrAuth, apiErr}}
		case http.StatusConflict:
			return &refusal{msg: fmt.Sprintf("telegram: %s: conflict, another poller or a webhook is active: %s", method, apiErr.Description),
				errs: []error{apiErr}}
		}
		return &refusal{msg: fmt.Sprintf("telegram: %s: %s (%d)", method, apiErr.Description, apiErr.ErrorCode), errs: []error{apiErr}}
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
