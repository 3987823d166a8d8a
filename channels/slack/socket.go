package slack

import (
	"context"
	"errors"
	"fmt"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/reefgw/reef/channels"
)

// authErrors are the Web API errors that mean the credentials are wrong for good.
var authErrors = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
	"token_expired": true, "not_allowed_token_type": true, "missing_scope": false,
}

// Run receives messages until ctx ends: over Socket Mode, or by the Events API endpoint.
func (b *Bot) Run(ctx context.Context, deliver channels.Deliver) error {
	if err := b.whoAmI(ctx); err != nil {
		return err
	}
	if b.cfg.Mode == ModeEvents {
		return b.runEvents(ctx, deliver)
	}
	return b.runSocket(ctx, deliver)
}

// whoAmI asks auth.test for the bot's user id (to recognise its mentions and its own messages).
func (b *Bot) whoAmI(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := b.api.AuthTestContext(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
			return nil
		}
		return b.apiError("auth.test", err)
	}
	b.mu.Lock()
	b.selfID, b.teamID = res.UserID, res.TeamID
	b.mu.Unlock()
	return nil
}

// runSocket runs one socketmode client: it connects, reconnects when Slack asks (disconnect)
// or the socket dies, and hands each events_api envelope to intake, acknowledging it only
// when intake accepted it.
func (b *Bot) runSocket(ctx context.Context, deliver channels.Deliver) error {
	sm := socketmode.New(b.api, socketmode.OptionLog(&sdkLog{b: b}), socketmode.OptionPingInterval(b.pingInterval),
		socketmode.OptionReadLimit(1<<20))
	runCtx, cancel := context.WithCancel(ctx)
	order := newChatOrder()
	defer func() {
		cancel()
		order.wait()
	}()
	errc := make(chan error, 1)
	go func() { errc <- sm.RunContext(runCtx) }()
	for {
		select {
		case <-ctx.Done():
			cancel()
			<-errc
			return nil
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			return b.apiError("socket mode", err)
		case ev := <-sm.Events:
			b.onSocketEvent(runCtx, sm, ev, order, deliver)
		}
	}
}

// onSocketEvent handles one event of the socketmode client.
func (b *Bot) onSocketEvent(ctx context.Context, sm *socketmode.Client, ev socketmode.Event, order *chatOrder, deliver channels.Deliver) {
	switch ev.Type {
	case socketmode.EventTypeConnected:
		b.log.Info().Msg("slack: socket mode connected")
		b.reachable()
	case socketmode.EventTypeConnectionError:
		if ce, ok := ev.Data.(*slackapi.ConnectionErrorEvent); ok {
			err := b.apiError("apps.connections.open", ce.ErrorObj)
			b.log.Warn().Err(err).Str("retry_in", ce.Backoff.Round(time.Millisecond).String()).Msg("slack: socket mode connection failed")
			b.unreachable(err, ce.Backoff)
		}
	case socketmode.EventTypeIncomingError:
		b.log.Info().Msg("slack: socket mode connection lost; reconnecting")
	case socketmode.EventTypeEventsAPI:
		b.onEnvelope(ctx, sm, ev.Request, order, deliver)
	case socketmode.EventTypeSlashCommand:
		b.onSlashCommand(ctx, sm, ev, order, deliver)
	case socketmode.EventTypeInteractive:
		b.onInteractive(ctx, sm, ev, order, deliver)
	}
}

// onEnvelope delivers the message of an events_api envelope in its chat's order and
// acknowledges the envelope once reef accepted it (or it needs nothing from reef).
func (b *Bot) onEnvelope(ctx context.Context, sm *socketmode.Client, req *socketmode.Request, order *chatOrder, deliver channels.Deliver) {
	if req == nil {
		return
	}
	cb, err := decodeCallback(req.Payload)
	if err != nil {
		b.log.Warn().Err(err).Msg("slack: an envelope that is not an event callback; acknowledged")
		_ = sm.AckCtx(ctx, req.EnvelopeID, nil)
		return
	}
	if req.RetryAttempt > 0 {
		b.log.Debug().Int("retry_attempt", req.RetryAttempt).Str("reason", req.RetryReason).Str("event", cb.EventID).Msg("slack: redelivered envelope")
	}
	id := req.EnvelopeID
	order.run(cb.Event.Channel, func() {
		if b.intake(ctx, cb, deliver) != nil {
			return // not acknowledged: Slack sends it again
		}
		if err := sm.AckCtx(ctx, id, nil); err != nil && ctx.Err() == nil {
			b.log.Warn().Err(err).Msg("slack: acknowledging an envelope failed")
		}
	})
}

// onSlashCommand hands reef's commands (/stop, /new, /status, … registered as the app's slash
// commands, since Slack's clients keep any text starting with "/" for themselves) to reef as
// the message text they stand for, and acknowledges the envelope once reef accepted it.
func (b *Bot) onSlashCommand(ctx context.Context, sm *socketmode.Client, ev socketmode.Event, order *chatOrder, deliver channels.Deliver) {
	cmd, ok := ev.Data.(slackapi.SlashCommand)
	if !ok || ev.Request == nil {
		return
	}
	id := ev.Request.EnvelopeID
	in, ok := slashInbound(cmd)
	if !ok {
		_ = sm.AckCtx(ctx, id, nil)
		return
	}
	order.run(in.ChatID, func() {
		if b.deliverOnce(ctx, in, deliver) == nil {
			_ = sm.AckCtx(ctx, id, nil)
		}
	})
}

// apiError turns an error of slack-go into a redacted error; rejected credentials wrap
// channels.ErrAuth.
func (b *Bot) apiError(op string, err error) error {
	if err == nil {
		return nil
	}
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) && authErrors[se.Err] || authErrors[err.Error()] {
		return b.errorf([]error{channels.ErrAuth}, "slack: %s: %v (check the app's tokens)", op, err)
	}
	var sc slackapi.StatusCodeError
	if errors.As(err, &sc) && sc.Code == 404 && op == "socket mode" {
		return b.errorf([]error{channels.ErrAuth}, "slack: %s: %v", op, err)
	}
	return b.errorf([]error{err}, "slack: %s: %s", op, fmt.Sprint(err))
}
