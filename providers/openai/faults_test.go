package openai_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// sleeps records the waits Retry asks for without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply fake.Reply
		want  error
	}{
		{"429", fake.Reply{Status: 429, RetryAfter: 3 * time.Second}, providers.ErrRateLimited},
		{"500", fake.Reply{Status: 500}, providers.ErrServer},
		{"503", fake.Reply{Status: 503}, providers.ErrOverloaded},
		{"401 echoing the key", fake.Reply{Status: 401}, providers.ErrAuth},
		{"400", fake.Reply{Status: 400}, providers.ErrBadRequest},
		{"overflow", fake.Reply{Overflow: true}, providers.ErrContextOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t, tt.reply)
			_, err := c.Stream(context.Background(), providers.Request{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error contains the API key: %q", err)
			}
			var apiErr *providers.APIError
			if !errors.As(err, &apiErr) || apiErr.Provider != "openai" || apiErr.Status == 0 {
				t.Errorf("err %#v, want an APIError from openai with the status", err)
			}
			if apiErr.RetryAfter != tt.reply.RetryAfter {
				t.Errorf("RetryAfter = %v, want %v", apiErr.RetryAfter, tt.reply.RetryAfter)
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	c, script := newClient(t, fake.Reply{Status: 429, RetryAfter: 2 * time.Second}, fake.Reply{Text: "after the wait"})
	var sl sleeps
	got, err := call(context.Background(), providers.Retry(c, providers.RetryConfig{Sleep: sl.Sleep}), providers.Request{})
	if err != nil || got.Text != "after the wait" {
		t.Fatalf("got %q, %v", got.Text, err)
	}
	if want := []time.Duration{2 * time.Second}; !cmp.Equal(sl.got(), want) {
		t.Errorf("slept %v, want %v", sl.got(), want)
	}
	if n := len(script.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestRetryServerErrorThenSuccess(t *testing.T) {
	c, script := newClient(t, fake.Reply{Status: 500}, fake.Reply{Status: 502}, fake.Reply{Text: "third time"})
	var sl sleeps
	cfg := providers.RetryConfig{Sleep: sl.Sleep, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	got, err := call(context.Background(), providers.Retry(c, cfg), providers.Request{})
	if err != nil || got.Text != "third time" {
		t.Fatalf("got %q, %v", got.Text, err)
	}
	if n := len(script.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	for i, d := range sl.got() {
		if ceil := 100 * time.Millisecond << i; d > ceil {
			t.Errorf("sleep %d = %v, want at most %v", i, d, ceil)
		}
	}
}

func TestLongRetryAfterFailsOver(t *testing.T) {
	first, firstScript := newClient(t, fake.Reply{Status: 429, RetryAfter: 10 * time.Minute})
	second, secondScript := newClient(t, fake.Reply{Text: "from the fallback"})
	var sl sleeps
	cfg := providers.RetryConfig{Sleep: sl.Sleep}
	p := providers.Failover(
		providers.Target{Label: "openai/gpt-4.1", Provider: providers.Retry(first, cfg), Model: "gpt-4.1"},
		providers.Target{Label: "local/qwen3", Provider: providers.Retry(second, cfg), Model: "qwen3"},
	)
	s, err := p.Stream(context.Background(), providers.Request{Model: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if label := providers.AnsweredBy(s); label != "local/qwen3" {
		t.Errorf("answered by %q, want local/qwen3", label)
	}
	got, err := drain(s)
	if err != nil || got.Text != "from the fallback" {
		t.Fatalf("got %q, %v", got.Text, err)
	}
	if len(sl.got()) != 0 {
		t.Errorf("slept %v before failing over, want no wait", sl.got())
	}
	if a, b := firstScript.Requests(), secondScript.Requests(); len(a) != 1 || a[0].Model != "gpt-4.1" || len(b) != 1 || b[0].Model != "qwen3" {
		t.Errorf("requests: first %d, second %d", len(a), len(b))
	}
}

func TestIdleTimeout(t *testing.T) {
	tests := []struct {
		name  string
		reply fake.Reply
	}{
		{"silent after the headers", fake.Reply{Hang: true}},
		{"no headers", fake.Reply{Delay: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(fake.NewScript(tt.reply))
			defer srv.Close()
			c := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: canary, IdleTimeout: 200 * time.Millisecond})
			start := time.Now()
			_, err := call(context.Background(), c, providers.Request{})
			if !errors.Is(err, providers.ErrIdleTimeout) {
				t.Fatalf("err = %v, want ErrIdleTimeout", err)
			}
			if !providers.Retryable(err) {
				t.Errorf("idle timeout not retryable: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v to time out", d)
			}
		})
	}
}

func TestCutStream(t *testing.T) {
	call0 := messages.ToolCall{ID: "c1", Name: "write_file", Arguments: `{"path":"a.txt","content":"a long body of text"}`}
	tests := []struct {
		name     string
		reply    fake.Reply
		wantText string
	}{
		{"in a tool call", fake.Reply{Text: "Writing.", ToolCalls: []messages.ToolCall{call0, call0}, CutInTool: true}, "Writing."},
		{"in text", fake.Reply{Text: "0123456789abcdef", CutInText: true}, "01234567"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t, tt.reply)
			got, err := call(context.Background(), c, providers.Request{})
			if !errors.Is(err, providers.ErrStreamCut) {
				t.Fatalf("err = %v, want ErrStreamCut", err)
			}
			if len(got.Calls) != 0 || got.Stop != "" || got.Text != tt.wantText {
				t.Errorf("got %+v; want text %q, no tool call, no stop", got, tt.wantText)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error contains the API key: %q", err)
			}
		})
	}
}

func TestCanaryKeyNeverInErrors(t *testing.T) {
	srv := openaitest.NewServer(fake.NewScript())
	url := srv.URL()
	srv.Close() // connection refused from now on
	c := openai.New(openai.Config{BaseURL: url, APIKey: canary})
	_, err := c.Stream(context.Background(), providers.Request{})
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if err2 := c.Ping(context.Background()); err2 == nil || strings.Contains(err2.Error(), canary) {
		t.Errorf("Ping: %v", err2)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("error contains the API key: %q", err)
	}
	var sl sleeps
	if _, err := call(context.Background(), providers.Retry(c, providers.RetryConfig{Sleep: sl.Sleep}), providers.Request{}); err == nil {
		t.Fatal("no error through Retry")
	}
	if n := len(sl.got()); n != 3 {
		t.Errorf("connection refused retried %d times, want 3", n)
	}
}

// TestShortKeyNotRedacted: a local server's one-letter key is no secret worth blanking every such
// letter in an error (#20 finding 11): the message stays readable.
func TestShortKeyNotRedacted(t *testing.T) {
	srv := openaitest.NewServer(fake.NewScript())
	url := srv.URL()
	srv.Close()
	c := openai.New(openai.Config{BaseURL: url, APIKey: "e"})
	_, err := c.Stream(context.Background(), providers.Request{})
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("error = %q, want it unredacted (\"connection refused\")", err)
	}
}
