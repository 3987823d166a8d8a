package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/channels"
)

// SecretHeader is the header Telegram puts the webhook secret token in.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// runWebhook serves the webhook on WebhookListen, then registers it with Telegram, and
// serves until ctx ends. The webhook stays registered after Run returns, so Telegram keeps
// updates while reef is down.
func (b *Bot) runWebhook(ctx context.Context, deliver channels.DeliverAll) error {
	ln, err := net.Listen("tcp", b.cfg.WebhookListen)
	if err != nil {
		return fmt.Errorf("telegram: webhook: listen on %s: %w", b.cfg.WebhookListen, err)
	}
	select {
	case b.webhookAddr <- ln.Addr().String():
	default:
	}
	srv := &http.Server{
		Handler:           b.webhookHandler(ctx, deliver),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		shutCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
	}()

	callCtx, cancel := context.WithTimeout(ctx, b.timing.callTimeout)
	err = b.api.SetWebhook(callCtx, &telego.SetWebhookParams{
		URL: b.cfg.WebhookURL, SecretToken: b.cfg.WebhookSecret, AllowedUpdates: allowedUpdates,
	})
	cancel()
	if err != nil {
		return b.apiError("setWebhook", err)
	}
	b.log.Info().Str("listen", ln.Addr().String()).Str("url", b.cfg.WebhookURL).Msg("telegram webhook serving")
	b.callReachable()
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return fmt.Errorf("telegram: webhook: serve: %w", err)
	}
}

// webhookHandler accepts Telegram's POSTs: the secret header must match, the body must be
// at most MaxWebhookBody, and the answer is 200 only after deliver accepted the update (or
// reef ignores its kind); any other answer makes Telegram deliver it again.
func (b *Bot) webhookHandler(runCtx context.Context, deliver channels.DeliverAll) http.Handler {
	secret := []byte(b.cfg.WebhookSecret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		got := []byte(r.Header.Get(SecretHeader))
		if len(got) == 0 || subtle.ConstantTimeCompare(got, secret) != 1 {
			b.log.Warn().Str("remote", r.RemoteAddr).Bool("headerPresent", len(got) > 0).Msg("telegram: webhook request without the right secret refused")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				b.log.Warn().Int64("limit", tooBig.Limit).Msg("telegram: webhook body too large; refused")
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		var u telego.Update
		if err := json.Unmarshal(body, &u); err != nil {
			http.Error(w, "malformed update", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(runCtx, cancel)()
		if err := b.deliverBatch(ctx, deliver, []telego.Update{u})[0]; err != nil {
			b.log.Warn().Err(err).Int("update", u.UpdateID).Msg("telegram: update not accepted; Telegram will deliver it again")
			http.Error(w, "not accepted, try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
