package feishu

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
)

type okTransport struct{}

func (okTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// TestRedactor checks the mechanism itself: configured secrets and bearer tokens seen on the
// wire are removed from errors and from the SDK's log lines, and sentinels survive.
func TestRedactor(t *testing.T) {
	var logs strings.Builder
	b, err := New(Config{AppID: "cli_redact", AppSecret: "canary-secret-1", EncryptKey: "canary-key-2",
		HTTPClient: &http.Client{Transport: okTransport{}}}, zerolog.New(&logs).Level(zerolog.TraceLevel))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/x", nil)
	req.Header.Set("Authorization", "Bearer t-canary-token-3")
	if _, err := b.http.Do(req); err != nil {
		t.Fatal(err)
	}
	leaky := errors.New("upstream said canary-secret-1 / canary-key-2 / t-canary-token-3")
	err = b.wrap("send", fmtErr{leaky, channels.ErrPermanent})
	logger := &sdkLogger{log: b.log, red: b.red}
	logger.Warn(context.Background(), "req with", "t-canary-token-3", "and canary-secret-1")
	logger.Debug(context.Background(), "debug canary-key-2")
	for _, c := range []string{"canary-secret-1", "canary-key-2", "t-canary-token-3"} {
		if strings.Contains(err.Error(), c) || strings.Contains(logs.String(), c) {
			t.Errorf("%q survived: error %q, logs %q", c, err, logs.String())
		}
	}
	if !errors.Is(err, channels.ErrPermanent) || !strings.HasPrefix(err.Error(), "feishu: send: ") {
		t.Errorf("wrapped error %q lost its prefix or sentinel", err)
	}
	if !strings.Contains(logs.String(), "[redacted]") {
		t.Errorf("logs %q show no redaction", logs.String())
	}
}

// fmtErr is an error that wraps a sentinel.
type fmtErr struct{ err, kind error }

func (e fmtErr) Error() string { return e.err.Error() }
func (e fmtErr) Unwrap() error { return e.kind }
