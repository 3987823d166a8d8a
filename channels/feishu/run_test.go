package feishu_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

func TestConformanceWebSocket(t *testing.T) {
	channeltest.Run(t, feishutest.WebSocketSetup)
}

func TestConformanceWebhook(t *testing.T) {
	channeltest.Run(t, feishutest.WebhookSetup)
}

// hostRecorder is a transport that answers like the platform without a network and records
// the hosts it was asked for: a token, the bot info, then a refused WebSocket endpoint.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
	paths []string
}

func (h *hostRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hosts = append(h.hosts, req.URL.Scheme+"://"+req.URL.Host)
	h.paths = append(h.paths, req.URL.Path)
	h.mu.Unlock()
	body := `{"code":0,"msg":"ok","tenant_access_token":"t-fake","expire":7200}`
	switch req.URL.Path {
	case "/open-apis/bot/v3/info":
		body = `{"code":0,"msg":"ok","bot":{"open_id":"ou_b","app_name":"b"}}`
	case "/callback/ws/endpoint":
		body = `{"code":1000040344,"msg":"refused"}`
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func TestDomains(t *testing.T) {
	tests := []struct{ domain, want string }{
		{"", "https://open.feishu.cn"},
		{"feishu", "https://open.feishu.cn"},
		{"lark", "https://open.larksuite.com"},
		{"http://127.0.0.1:1234/", "http://127.0.0.1:1234"},
	}
	for i, tt := range tests {
		rec := &hostRecorder{}
		bot, err := feishu.New(feishu.Config{AppID: "cli_domain_" + string(rune('a'+i)) + t.Name(), AppSecret: "s",
			Domain: tt.domain, HTTPClient: &http.Client{Transport: rec}}, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		if bot.Endpoint() != tt.want {
			t.Errorf("domain %q: endpoint %s, want %s", tt.domain, bot.Endpoint(), tt.want)
		}
		err = bot.Run(context.Background(), func(context.Context, messages.Inbound) error { return nil })
		if !errors.Is(err, channels.ErrAuth) {
			t.Errorf("domain %q: Run with a refused long connection = %v, want ErrAuth", tt.domain, err)
		}
		for _, h := range rec.hosts {
			if h != tt.want {
				t.Errorf("domain %q: request went to %s, want %s", tt.domain, h, tt.want)
			}
		}
		if !slices.Contains(rec.paths, "/open-apis/bot/v3/info") || !slices.Contains(rec.paths, "/callback/ws/endpoint") {
			t.Errorf("domain %q: paths %v, want bot info and the WebSocket endpoint", tt.domain, rec.paths)
		}
	}
	if _, err := feishu.New(feishu.Config{AppID: "a", AppSecret: "s", Domain: "example.com"}, zerolog.Nop()); err == nil {
		t.Error("New accepted a domain that is neither feishu, lark nor a URL")
	}
}

func TestReplayedEventDeliveredAgain(t *testing.T) {
	for _, mode := range []string{feishu.ModeWebSocket, feishu.ModeWebhook} {
		t.Run(mode, func(t *testing.T) {
			var srv *feishutest.Server
			var box *inbox
			if mode == feishu.ModeWebSocket {
				srv, _, box = wsBot(t, zerolog.Nop())
			} else {
				var url string
				srv, box, _, url = hookBot(t, "vt-r", "ek-r")
				srv.UseWebhook(func() string { return url }, "ek-r")
			}
			eventID, mid := srv.Push(feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Text: "once"})
			first := box.next(t)
			srv.Redeliver(eventID)
			second := box.next(t)
			if first.MessageID != mid || second.MessageID != mid || second.Text != "once" {
				t.Errorf("replay delivered %+v then %+v, want both with message id %s", first, second, mid)
			}
		})
	}
}

func TestFailedDeliveryNotAcknowledged(t *testing.T) {
	srv, _, box := wsBot(t, zerolog.Nop())
	var once sync.Once
	box.fail = func(messages.Inbound) error {
		var err error
		once.Do(func() { err = errors.New("disk full") })
		return err
	}
	eventID, _ := srv.Push(feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Text: "keep"})
	if got := box.next(t).Text; got != "keep" {
		t.Fatalf("got %q, want the redelivered message", got)
	}
	eventually(t, func() bool { return srv.Pending() == 0 })
	if got := srv.Attempts(eventID); !slices.Equal(got, []int{500, 200}) {
		t.Errorf("acks %v, want [500 200]: a failed delivery is answered 500, then the retry 200", got)
	}
}

func TestAuthFailureStopsRun(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	cfg := srv.BotConfig()
	cfg.AppSecret = "wrong-secret"
	bot, err := feishu.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	err = bot.Run(context.Background(), func(context.Context, messages.Inbound) error { return nil })
	if !errors.Is(err, channels.ErrAuth) || !strings.HasPrefix(err.Error(), "feishu: ") {
		t.Errorf("Run with a wrong secret = %v, want a feishu: error wrapping ErrAuth", err)
	}

	// A stale token or a platform hiccup is not an auth failure: the connector retries.
	srv = feishutest.New(t, feishutest.Config{})
	bot, err = feishu.New(srv.BotConfig(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, code := range []int{99991663, 500} {
		srv.FailNext("botinfo", code)
		srv.FailNext("botinfo", code) // the SDK retries once after a token error
		err = bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil })
		if err == nil || errors.Is(err, channels.ErrAuth) {
			t.Errorf("Run when bot info fails with %d = %v, want a transient error", code, err)
		}
	}
}

func TestCancelStopsWebSocket(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	bot, err := feishu.New(srv.BotConfig(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, newInbox().deliver) }()
	eventually(t, srv.Connected)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5 s of cancel")
	}
	eventually(t, func() bool { return !srv.Connected() })
}
