package feishu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
)

// redactor removes secrets from text: the configured secrets and every access token the bot
// has sent in an Authorization header.
type redactor struct {
	mu      sync.Mutex
	secrets []string
}

func newRedactor(secrets ...string) *redactor {
	r := &redactor{}
	for _, s := range secrets {
		r.add(s)
	}
	return r
}

func (r *redactor) add(s string) {
	if len(s) < 4 { // too short to redact without mangling ordinary text
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, have := range r.secrets {
		if have == s {
			return
		}
	}
	if len(r.secrets) >= 64 { // tokens rotate every two hours; keep the newest
		r.secrets = append(r.secrets[:3], r.secrets[4:]...)
	}
	r.secrets = append(r.secrets, s)
}

func (r *redactor) clean(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	return s
}

// redactedError is an error whose text was redacted; it still matches the sentinel it wraps.
type redactedError struct {
	msg  string
	kind error // channels.ErrAuth, channels.ErrPermanent or nil
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.kind }

// errorf formats an error like fmt.Errorf and redacts its text. kind, when not nil, is the
// sentinel the result matches with errors.Is.
func (b *Bot) errorf(kind error, format string, args ...any) error {
	return &redactedError{msg: b.red.clean(fmt.Sprintf(format, args...)), kind: kind}
}

// wrap redacts err and prefixes it with "feishu: op: ", keeping a sentinel it matched.
func (b *Bot) wrap(op string, err error) error {
	var kind error
	for _, k := range []error{channels.ErrAuth, channels.ErrPermanent, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, k) {
			kind = k
			break
		}
	}
	return b.errorf(kind, "feishu: %s: %v", op, err)
}

// spyTransport records the bearer tokens the SDK sends so the redactor knows them.
type spyTransport struct {
	base http.RoundTripper
	red  *redactor
}

func (t *spyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if auth := req.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		t.red.add(strings.TrimPrefix(auth, "Bearer "))
	}
	return t.base.RoundTrip(req)
}

// spyClient returns a copy of hc (or a default client) whose transport feeds the redactor.
func spyClient(hc *http.Client, red *redactor) *http.Client {
	c := &http.Client{Timeout: 30 * time.Second}
	if hc != nil {
		cp := *hc
		c = &cp
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &spyTransport{base: base, red: red}
	return c
}

// sdkLogger routes the SDK's log lines to zerolog, redacted. The SDK's debug lines (request
// paths, event payloads) go to trace level.
type sdkLogger struct {
	log zerolog.Logger
	red *redactor
}

func (l *sdkLogger) line(ev *zerolog.Event, args []any) {
	ev.Str("src", "lark-sdk").Msg(l.red.clean(strings.TrimSpace(fmt.Sprintln(args...))))
}

func (l *sdkLogger) Debug(_ context.Context, args ...any) { l.line(l.log.Trace(), args) }
func (l *sdkLogger) Info(_ context.Context, args ...any)  { l.line(l.log.Debug(), args) }
func (l *sdkLogger) Warn(_ context.Context, args ...any)  { l.line(l.log.Warn(), args) }
func (l *sdkLogger) Error(_ context.Context, args ...any) { l.line(l.log.Error(), args) }
