package feishu

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	larkevent "github.com/larksuite/oapi-sdk-go/v3/event"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/reefgw/reef/channels"
)

// MaxWebhookBody is the largest webhook body accepted; larger ones get 413.
const MaxWebhookBody = 1 << 20

// runWebhook serves the event callback URL until ctx ends.
func (b *Bot) runWebhook(ctx context.Context, deliver channels.Deliver) error {
	if b.cfg.VerificationToken == "" && b.cfg.EncryptKey == "" {
		return errors.New("feishu: webhook mode needs verificationToken or encryptKey")
	}
	ln, err := net.Listen("tcp", b.cfg.WebhookListen)
	if err != nil {
		return b.wrap("webhook", err)
	}
	mux := http.NewServeMux()
	mux.Handle(b.cfg.WebhookPath, b.webhookHandler(deliver))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
	}
	b.mu.Lock()
	b.hookURL = "http://" + ln.Addr().String() + b.cfg.WebhookPath
	b.mu.Unlock()
	b.log.Info().Str("listen", ln.Addr().String()).Str("path", b.cfg.WebhookPath).Msg("webhook listening")
	b.reachable() // the bot's info answered (Run) and the webhook listens
	defer func() {
		b.mu.Lock()
		b.hookURL = ""
		b.mu.Unlock()
	}()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return b.wrap("webhook", err)
	case <-ctx.Done():
		stop, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := srv.Shutdown(stop); err != nil {
			_ = srv.Close()
		}
		return nil
	}
}

// envelope is the part of a callback body needed to route it (schema 2.0 and 1.0).
type envelope struct {
	Encrypt   string                 `json:"encrypt"`
	Type      string                 `json:"type"`
	Token     string                 `json:"token"`
	Challenge string                 `json:"challenge"`
	Header    *larkevent.EventHeader `json:"header"`
}

// webhookHandler answers the platform's callbacks: url_verification, then events. A message
// is acknowledged (200) only after deliver returned nil; a failed or slow delivery gets 500 so
// the platform sends the event again.
func (b *Bot) webhookHandler(deliver channels.Deliver) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				b.log.Warn().Int64("limit", tooBig.Limit).Msg("webhook body too large; refused")
				http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		plain, env, status := b.openBody(raw)
		if status != http.StatusOK {
			http.Error(w, http.StatusText(status), status)
			return
		}
		if env.Type == string(larkevent.ReqTypeChallenge) {
			b.answerChallenge(w, env)
			return
		}
		if b.cfg.EncryptKey != "" && !b.signed(r, raw) {
			b.log.Warn().Str("remote", r.RemoteAddr).Msg("webhook with a bad or missing signature; refused")
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		token, eventType := env.Token, ""
		if env.Header != nil {
			token, eventType = env.Header.Token, env.Header.EventType
		}
		if b.cfg.VerificationToken != "" && !equal(token, b.cfg.VerificationToken) {
			b.log.Warn().Str("remote", r.RemoteAddr).Msg("webhook with a wrong verification token; refused")
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		if eventType != EventMessageReceive {
			writeJSON(w, http.StatusOK, map[string]string{"msg": "success"})
			return
		}
		var ev larkim.P2MessageReceiveV1
		if err := json.Unmarshal(plain, &ev); err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		if err := b.deliverBounded(context.WithoutCancel(r.Context()), deliver, &ev); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"msg": "not accepted; retry"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"msg": "success"})
	}
}

// openBody decrypts an {"encrypt": ...} body and parses its envelope. It returns a status
// other than 200 when the body cannot be read.
func (b *Bot) openBody(raw []byte) ([]byte, envelope, int) {
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, env, http.StatusBadRequest
	}
	if env.Encrypt == "" {
		if b.cfg.EncryptKey != "" { // the platform encrypts everything once a key is set
			return nil, env, http.StatusBadRequest
		}
		return raw, env, http.StatusOK
	}
	if b.cfg.EncryptKey == "" {
		b.log.Warn().Msg("webhook body is encrypted but no encryptKey is configured")
		return nil, env, http.StatusBadRequest
	}
	plain, err := larkevent.EventDecrypt(env.Encrypt, b.cfg.EncryptKey)
	if err != nil {
		return nil, env, http.StatusBadRequest
	}
	env = envelope{}
	if err := json.Unmarshal(plain, &env); err != nil || env.Encrypt != "" {
		return nil, env, http.StatusBadRequest
	}
	return plain, env, http.StatusOK
}

func (b *Bot) answerChallenge(w http.ResponseWriter, env envelope) {
	if b.cfg.VerificationToken != "" && !equal(env.Token, b.cfg.VerificationToken) {
		b.log.Warn().Msg("url_verification with a wrong token; refused")
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"challenge": env.Challenge})
}

// signed checks X-Lark-Signature = hex(sha256(timestamp + nonce + encryptKey + body)).
func (b *Bot) signed(r *http.Request, raw []byte) bool {
	sig := r.Header.Get(larkevent.EventSignature)
	if sig == "" {
		return false
	}
	want := larkevent.Signature(r.Header.Get(larkevent.EventRequestTimestamp),
		r.Header.Get(larkevent.EventRequestNonce), b.cfg.EncryptKey, string(raw))
	return equal(sig, want)
}

// deliverBounded delivers the event but gives up waiting after deliverTimeout, so the
// platform gets an answer within its 3 s limit (webhook and long connection alike); a late
// delivery that still succeeds is deduplicated when the platform sends the event again.
func (b *Bot) deliverBounded(ctx context.Context, deliver channels.Deliver, ev *larkim.P2MessageReceiveV1) error {
	ctx, cancel := context.WithTimeout(ctx, b.deliverTimeout)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		chat, at := orderKey(ev)
		b.order.do(chat, at, func() { done <- b.handle(ctx, deliver, ev) })
	}()
	timer := time.NewTimer(b.deliverTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		b.log.Warn().Str("after", b.deliverTimeout.Round(time.Millisecond).String()).Msg("delivery too slow; answered 500 so the platform redelivers")
		return context.DeadlineExceeded
	}
}

// orderKey returns the chat of an event and its create time (ms), for chatOrder.
func orderKey(ev *larkim.P2MessageReceiveV1) (string, int64) {
	if ev == nil || ev.Event == nil || ev.Event.Message == nil {
		return "", 0
	}
	at, _ := strconv.ParseInt(str(ev.Event.Message.CreateTime), 10, 64)
	return str(ev.Event.Message.ChatId), at
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
