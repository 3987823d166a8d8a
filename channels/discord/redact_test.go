package discord_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

const canary = "CANARY-TOKEN-ab12.cd34.ef56"

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// echoServer is a careless server that quotes the request's Authorization header in every
// error. GET /gateway and /gateway/bot answer with gatewayURL unless it is empty.
func echoServer(t *testing.T, status int, gatewayURL string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.URL.Path == "/api/v9/gateway" || r.URL.Path == "/api/v9/gateway/bot") && gatewayURL != "" {
			json.NewEncoder(w).Encode(map[string]any{"url": gatewayURL, "shards": 1})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"code": 50001, "message": "refused: " + r.Header.Get("Authorization")})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	t.Parallel()
	gw := discordtest.New(t, discordtest.Config{Token: canary})
	logs := &syncBuffer{}
	rest := echoServer(t, http.StatusForbidden, gw.WSURL)
	bot, err := discord.New(discord.Config{Token: "Bot " + canary, APIBase: rest.URL}, zerolog.New(logs).Level(zerolog.DebugLevel))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan messages.Inbound, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- bot.Run(ctx, func(_ context.Context, in messages.Inbound) error { got <- in; return nil })
	}()
	// The channel lookup for a guild message fails (and is logged); the message still arrives.
	gw.GuildMessage(t, "g1", "c1", "8", "hello")
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("message not delivered")
	}
	var errs []error
	_, err = bot.Send(context.Background(), messages.Outbound{ChatID: "c1", Text: "hi"})
	errs = append(errs, err)
	errs = append(errs, bot.Edit(context.Background(), "c1", "1", "x"), bot.Typing(context.Background(), "c1"))
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}

	// A failing gateway lookup, with the token quoted back.
	unauthorized := echoServer(t, http.StatusUnauthorized, "")
	bot2, err := discord.New(discord.Config{Token: canary, APIBase: unauthorized.URL}, zerolog.New(logs))
	if err != nil {
		t.Fatal(err)
	}
	runErr := bot2.Run(context.Background(), func(context.Context, messages.Inbound) error { return nil })
	if !errors.Is(runErr, channels.ErrAuth) {
		t.Errorf("Run with a refused token = %v, want ErrAuth", runErr)
	}
	errs = append(errs, runErr)

	for i, err := range errs {
		if err == nil {
			t.Errorf("error %d is nil, want a failure from the echo server", i)
			continue
		}
		if strings.Contains(err.Error(), canary) {
			t.Errorf("error %d leaks the token: %v", i, err)
		}
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("error %d = %v, want the echoed token shown as [redacted]", i, err)
		}
	}
	if out := logs.String(); strings.Contains(out, canary) || !strings.Contains(out, "[redacted]") {
		t.Errorf("logs leak the token or miss the redacted lookup failure:\n%s", out)
	}
}
