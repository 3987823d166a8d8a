package discord_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

func newBot(t *testing.T, srv *discordtest.Server) *discord.Bot {
	t.Helper()
	b, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// resumeChecker is the fake platform, checking when the test ends that a dropped socket was
// resumed (op 6). (A second IDENTIFY may follow: discordgo's heartbeat goroutine of the
// dropped socket can close the new one with 1000, which ends the session on Discord; the
// bot then reads what it missed over REST, session.go.)
type resumeChecker struct {
	*discordtest.Server
	dropped atomic.Bool
}

func (p *resumeChecker) Drop() {
	p.dropped.Store(true)
	p.Server.Drop()
}

func TestConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) (channels.Channel, channeltest.Platform) {
		srv := discordtest.New(t, discordtest.Config{})
		p := &resumeChecker{Server: srv}
		t.Cleanup(func() {
			if p.dropped.Load() && srv.Resumes() == 0 {
				t.Errorf("after a dropped socket: %d resumes, %d identifies; want a RESUME", srv.Resumes(), srv.Identifies())
			}
		})
		return newBot(t, srv), p
	})
}

// running is a Bot running against a fake, with the messages it delivered.
type running struct {
	bot  *discord.Bot
	srv  *discordtest.Server
	got  chan messages.Inbound
	done chan error
	stop context.CancelFunc
}

// run starts a bot against srv; the test's end stops it and checks Run returned nil.
func run(t *testing.T, srv *discordtest.Server) *running {
	t.Helper()
	r := &running{bot: newBot(t, srv), srv: srv, got: make(chan messages.Inbound, 100), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() {
		r.done <- r.bot.Run(ctx, func(_ context.Context, in messages.Inbound) error {
			r.got <- in
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run after cancel = %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of cancel")
		}
	})
	return r
}

func (r *running) next(t *testing.T) messages.Inbound {
	t.Helper()
	select {
	case in := <-r.got:
		return in
	case err := <-r.done:
		t.Fatalf("Run returned %v while waiting for a message", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no message delivered within 10s")
	}
	return messages.Inbound{}
}

// nothing checks that no message is delivered within a short while.
func (r *running) nothing(t *testing.T) {
	t.Helper()
	select {
	case in := <-r.got:
		t.Errorf("delivered %+v, want nothing", in)
	case <-time.After(200 * time.Millisecond):
	}
}

// eventually polls cond until it holds or 10s passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newBotToken(t *testing.T, apiBase, token string) *discord.Bot {
	t.Helper()
	b, err := discord.New(discord.Config{Token: token, APIBase: apiBase}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNew(t *testing.T) {
	tests := []struct {
		cfg     discord.Config
		wantErr string
	}{
		{discord.Config{Token: ""}, "no bot token"},
		{discord.Config{Token: "Bot "}, "no bot token"},
		{discord.Config{Token: "a b"}, "white space"},
		{discord.Config{Token: "t", APIBase: "ftp://x"}, "not an http(s) URL"},
		{discord.Config{Token: "Bot t", APIBase: "http://127.0.0.1:1"}, ""}, // New never dials
		{discord.Config{Token: "t"}, ""},
	}
	for _, tt := range tests {
		_, err := discord.New(tt.cfg, zerolog.Nop())
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "discord: ")) {
			t.Errorf("New(%+v) = %v, want error containing %q", tt.cfg, err, tt.wantErr)
		}
	}
}
