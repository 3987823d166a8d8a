package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/reefgw/reef/channels"
)

// maxEventBody is the largest Events API request read; Slack's events are far smaller.
const maxEventBody = 1 << 20

// signatureWindow is how old a request's timestamp may be (Slack: five minutes), against replays.
const signatureWindow = 5 * time.Minute

// runEvents serves the Events API endpoint on Config.EventsListen until ctx ends; without
// one, reef's web listener serves WebEndpoint and Run only lends it deliver.
func (b *Bot) runEvents(ctx context.Context, deliver channels.Deliver) error {
	if b.cfg.EventsListen == "" {
		return b.lendDeliver(ctx, deliver)
	}
	ln, err := net.Listen("tcp", b.cfg.EventsListen)
	if err != nil {
		return b.errorf(nil, "slack: events endpoint: %v", err)
	}
	order := newChatOrder()
	mux := http.NewServeMux()
	mux.Handle("POST "+b.cfg.EventsPath, b.handler(ctx, deliver, order))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	b.mu.Lock()
	b.hookURL = "http://" + ln.Addr().String() + b.cfg.EventsPath
	b.mu.Unlock()
	b.log.Info().Str("url", b.EventsURL()).Msg("slack: events endpoint listening")
	b.reachable()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	order.wait()
	b.mu.Lock()
	b.hookURL = ""
	b.mu.Unlock()
	if ctx.Err() != nil || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return b.errorf(nil, "slack: events endpoint: %v", err)
}

// lendDeliver makes WebEndpoint deliver through deliver until ctx ends.
func (b *Bot) lendDeliver(ctx context.Context, deliver channels.Deliver) error {
	b.mu.Lock()
	b.web = &webIntake{ctx: ctx, deliver: deliver}
	b.mu.Unlock()
	b.reachable()
	<-ctx.Done()
	b.mu.Lock()
	b.web = nil
	b.mu.Unlock()
	b.webOrder.wait()
	return nil
}

// webIntake is what a running Run lends the endpoint on reef's web listener.
type webIntake struct {
	ctx     context.Context
	deliver channels.Deliver
}

// WebEndpoint returns the path and handler of the Events API endpoint for reef's web listener,
// or a nil handler when the bot is not in events mode on it (Socket Mode, or an eventsListen
// of its own). Its requests are answered 503, so that Slack retries them, while Run is not
// running.
func (b *Bot) WebEndpoint() (string, http.Handler) {
	if b.cfg.Mode != ModeEvents || b.cfg.EventsListen != "" {
		return "", nil
	}
	return b.cfg.EventsPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		in := b.web
		b.mu.Unlock()
		if in == nil {
			http.Error(w, "not running", http.StatusServiceUnavailable)
			return
		}
		b.handler(in.ctx, in.deliver, b.webOrder).ServeHTTP(w, r)
	})
}

// handler is the Events API endpoint: it refuses requests without a valid signature, answers
// url_verification, and answers an event callback 200 once reef accepted its message (within
// Slack's 3 s), or 500 so that Slack retries it (X-Slack-Retry-Num). ctx bounds deliveries.
func (b *Bot) handler(ctx context.Context, deliver channels.Deliver, order *chatOrder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if !b.verify(r.Header, body, time.Now()) {
			b.log.Warn().Str("remote", r.RemoteAddr).Msg("slack: an events request with a bad or missing signature; refused")
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		cb, err := decodeCallback(body)
		if err != nil {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		if cb.Type == "url_verification" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, cb.Challenge)
			return
		}
		if n := r.Header.Get("X-Slack-Retry-Num"); n != "" {
			b.log.Debug().Str("retry", n).Str("reason", r.Header.Get("X-Slack-Retry-Reason")).Str("event", cb.EventID).Msg("slack: redelivered event")
		}
		dctx, cancel := context.WithTimeout(ctx, b.deliverTimeout)
		defer cancel()
		done := make(chan error, 1)
		order.run(cb.Event.Channel, func() { done <- b.intake(dctx, cb, deliver) })
		select {
		case err = <-done:
		case <-dctx.Done():
			err = dctx.Err()
		}
		if err != nil {
			http.Error(w, "not accepted", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// verify checks Slack's request signature: v0=hex(HMAC-SHA256(secret, "v0:" + timestamp +
// ":" + body)), with a timestamp within signatureWindow of now.
func (b *Bot) verify(h http.Header, body []byte, now time.Time) bool {
	ts := h.Get("X-Slack-Request-Timestamp")
	sig := h.Get("X-Slack-Signature")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return false
	}
	if d := now.Sub(time.Unix(sec, 0)); d > signatureWindow || d < -signatureWindow {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(Sign(b.cfg.SigningSecret, ts, body)))
}

// Sign is the X-Slack-Signature of body sent at timestamp ts (seconds) with secret.
func Sign(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}
