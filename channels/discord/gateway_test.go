package discord_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

func TestIdentifyAsksForIntentsWithoutCompression(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "hi")
	r.next(t)
	id := srv.LastIdentify()
	want := discordtest.IntentGuildMessages | discordtest.IntentDirectMessages | discordtest.IntentMessageContent
	if id.Intents&want != want || id.Compress || id.Token != "Bot "+srv.Token() {
		t.Errorf("identify: intents %b, compress %v; want intents including %b and no compression", id.Intents, id.Compress, want)
	}
}

func TestDroppedSocketResumesAndReplays(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "before")
	r.next(t)
	srv.Drop()
	// discordgo takes a second to notice and close; these are queued in the session meanwhile.
	ids := []string{
		srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", Content: "during one"}),
		srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", Content: "during two"}),
	}
	for i, want := range []string{"during one", "during two"} {
		in := r.next(t)
		if in.Text != want || in.MessageID != ids[i] {
			t.Errorf("after resume got %q (id %s), want %q (id %s)", in.Text, in.MessageID, want, ids[i])
		}
	}
	if srv.Resumes() < 1 || srv.Identifies() != 1 {
		t.Errorf("%d resumes and %d identifies, want a RESUME and one IDENTIFY", srv.Resumes(), srv.Identifies())
	}
	if srv.Replayed() < 2 {
		t.Errorf("the fake replayed %d dispatches, want the 2 sent while the socket was down", srv.Replayed())
	}
	srv.UserSays(t, "dm1", "7", "after")
	if got := r.next(t).Text; got != "after" {
		t.Errorf("got %q, want %q", got, "after")
	}
	r.nothing(t)
}

func TestNonFatalCloseAndReconnectRequestResume(t *testing.T) {
	t.Parallel()
	for name, disturb := range map[string]func(*discordtest.Server){
		"close 4000":     func(s *discordtest.Server) { s.CloseWith(4000) }, // unknown error
		"op 7 reconnect": (*discordtest.Server).RequestReconnect,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := discordtest.New(t, discordtest.Config{})
			r := run(t, srv)
			srv.UserSays(t, "dm1", "7", "one")
			r.next(t)
			disturb(srv)
			srv.UserSays(t, "dm1", "7", "two")
			if got := r.next(t).Text; got != "two" {
				t.Errorf("got %q, want %q", got, "two")
			}
			eventually(t, "a RESUME", func() bool { return srv.Resumes() >= 1 })
			r.nothing(t)
		})
	}
}

// runUntilError runs a bot that is expected to give up, and returns Run's error.
func runUntilError(t *testing.T, srv *discordtest.Server, token string) error {
	t.Helper()
	bot := newBot(t, srv)
	if token != "" {
		bot = newBotToken(t, srv.URL, token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil })
	if ctx.Err() != nil {
		t.Fatal("Run did not return before the deadline: it is looping")
	}
	return err
}

func TestFatalCloseCodesStopRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		cfg            discordtest.Config
		closeBefore    int // CloseWith before Run: every IDENTIFY is refused
		closeLater     int // CloseWith once connected
		wantText       string
		wantIdentifies int
	}{
		{name: "4004 at identify", closeBefore: 4004, wantText: "token", wantIdentifies: 1},
		{name: "4014 disallowed intent", cfg: discordtest.Config{DisallowedIntents: discordtest.IntentMessageContent},
			wantText: "Message Content intent", wantIdentifies: 1},
		{name: "4013 invalid intents", closeBefore: 4013, wantText: "intents", wantIdentifies: 1},
		{name: "4004 while connected", closeLater: 4004, wantText: "token", wantIdentifies: 1},
		{name: "4014 while connected", closeLater: 4014, wantText: "Message Content intent", wantIdentifies: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := discordtest.New(t, tt.cfg)
			if tt.closeBefore != 0 {
				srv.CloseWith(tt.closeBefore)
			}
			if tt.closeLater != 0 {
				go func() {
					for deadline := time.Now().Add(10 * time.Second); !srv.Connected() && time.Now().Before(deadline); {
						time.Sleep(10 * time.Millisecond)
					}
					srv.CloseWith(tt.closeLater)
				}()
			}
			err := runUntilError(t, srv, "")
			if !errors.Is(err, channels.ErrAuth) || !strings.Contains(err.Error(), tt.wantText) || !strings.HasPrefix(err.Error(), "discord: ") {
				t.Errorf("Run = %v, want a discord: error wrapping ErrAuth that mentions %q", err, tt.wantText)
			}
			if got := srv.Identifies(); got != tt.wantIdentifies {
				t.Errorf("%d identifies, want %d (no reconnect loop)", got, tt.wantIdentifies)
			}
			if tt.closeLater != 0 && srv.Resumes() > 1 {
				t.Errorf("%d resumes after a fatal close, want at most 1", srv.Resumes())
			}
		})
	}
}

func TestWrongTokenStopsRunBeforeTheGateway(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	err := runUntilError(t, srv, "not-the-token")
	if !errors.Is(err, channels.ErrAuth) {
		t.Errorf("Run = %v, want ErrAuth", err)
	}
	if srv.Identifies() != 0 {
		t.Errorf("%d identifies, want none", srv.Identifies())
	}
}

func TestRunStopsWhileReconnecting(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "hi")
	r.next(t)
	srv.Drop()
	srv.Close() // nothing to reconnect to; the cleanup checks that Run returns nil within 5s of cancel
}

func TestHeartbeatsAndStalledGateway(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{HeartbeatInterval: 50 * time.Millisecond})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "one")
	r.next(t)
	eventually(t, "heartbeats", func() bool { return srv.Heartbeats() >= 3 })
	// No more acks: discordgo notices, closes with 1000 (which ends the session on Discord),
	// tries to RESUME, is refused and identifies anew.
	srv.Stall(true)
	eventually(t, "a RESUME after missing acks", func() bool { return srv.Resumes() >= 1 })
	srv.Stall(false)
	srv.UserSays(t, "dm1", "7", "two")
	if got := r.next(t).Text; got != "two" {
		t.Errorf("got %q, want %q", got, "two")
	}
	if srv.Invalidated() != 1 || srv.Identifies() != 2 {
		t.Errorf("%d sessions ended by the client, %d identifies; want 1 and 2", srv.Invalidated(), srv.Identifies())
	}
}

func TestExpiredSessionIdentifiesAgain(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "one")
	r.next(t)
	srv.ExpireSessions() // the RESUME gets op 9; discordgo identifies on the same socket
	// Said while the bot has no session (not replayed), or on the new one: delivered once.
	srv.UserSays(t, "dm1", "7", "two")
	if got := r.next(t).Text; got != "two" {
		t.Errorf("got %q, want %q", got, "two")
	}
	r.nothing(t)
	// discordgo's heartbeat goroutine of the dead socket may close the new one with 1000 (it
	// closes whatever socket the session holds), which ends that session too: at least two.
	if srv.Resumes() < 1 || srv.Identifies() < 2 {
		t.Errorf("%d resumes, %d identifies; want a refused RESUME, then a second IDENTIFY", srv.Resumes(), srv.Identifies())
	}
}

func TestRunFailsWhenTheGatewayIsGone(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	bot.SetReconnectWaits(0, 10*time.Millisecond, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil }) }()
	eventually(t, "a connection", srv.Connected)
	srv.Close()
	err := <-done
	if ctx.Err() != nil {
		t.Fatal("Run kept trying until the deadline")
	}
	if err == nil || errors.Is(err, channels.ErrAuth) || !strings.HasPrefix(err.Error(), "discord: ") {
		t.Errorf("Run = %v, want a discord: error (not ErrAuth) so that the connector restarts it", err)
	}
}

func TestCancelWhileTheGatewayIsSilent(t *testing.T) {
	t.Parallel()
	accepted := make(chan struct{}, 1)
	var upgrader websocket.Upgrader
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("GET /api/v9/gateway", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"url": "ws%s/ws"}`, strings.TrimPrefix(srv.URL, "http"))
	})
	mux.HandleFunc("GET /api/v9/gateway/bot", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"url": "ws%s/ws", "shards": 1}`, strings.TrimPrefix(srv.URL, "http"))
	})
	mux.HandleFunc("GET /ws/", func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		accepted <- struct{}{}
		c.ReadMessage() // never says HELLO
	})
	bot := newBotToken(t, srv.URL, "tok")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil }) }()
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the bot did not connect")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run hangs waiting for HELLO after cancel")
	}
}
