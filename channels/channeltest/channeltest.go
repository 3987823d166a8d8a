// Package channeltest is the conformance suite every channel adapter runs against its fake
// platform server: inbound normalisation, acknowledgement only after durable acceptance,
// chunked replies within the platform's limit, reconnection after a dropped connection, and a
// prompt stop when the context ends.
package channeltest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Platform is the fake platform side of the channel under test.
type Platform interface {
	// UserSays makes a person send text to the bot in a direct chat. It returns once the
	// platform has queued the message for the bot.
	UserSays(t *testing.T, chatID, senderID, text string)
	// Sent returns the texts the bot sent to chatID, in order.
	Sent(chatID string) []string
	// Drop breaks the bot's current connection (closes the socket, fails the next poll).
	Drop()
	// Limit is the platform's message length limit and how it is measured.
	Limit() (int, channels.Measure)
	// Redelivers reports whether the platform re-sends a message the bot did not acknowledge
	// (Telegram offsets, Feishu webhooks); Discord does not.
	Redelivers() bool
}

// Setup creates a channel connected to a fresh fake platform.
type Setup func(t *testing.T) (channels.Channel, Platform)

// Timeout bounds each wait of the suite.
const Timeout = 15 * time.Second

// recorder is a Deliver that records inbound messages and can be told to fail.
type recorder struct {
	mu   sync.Mutex
	got  []messages.Inbound
	fail int // fail this many deliveries first
	ch   chan messages.Inbound
}

func newRecorder() *recorder { return &recorder{ch: make(chan messages.Inbound, 100)} }

func (r *recorder) deliver(_ context.Context, in messages.Inbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return errors.New("storage unavailable")
	}
	r.got = append(r.got, in)
	r.ch <- in
	return nil
}

func (r *recorder) next(t *testing.T) messages.Inbound {
	t.Helper()
	select {
	case in := <-r.ch:
		return in
	case <-time.After(Timeout):
		t.Fatal("no inbound message delivered in time")
		return messages.Inbound{}
	}
}

// start runs the channel until the test ends and checks that Run returns promptly after cancel.
func start(t *testing.T, ch channels.Channel, rec *recorder) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, rec.deliver) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run after cancel returned %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of cancel")
		}
	})
	return ctx
}

// Run runs the conformance suite.
func Run(t *testing.T, setup Setup) {
	t.Run("inbound", func(t *testing.T) {
		ch, p := setup(t)
		rec := newRecorder()
		start(t, ch, rec)
		p.UserSays(t, "100", "200", "hello bot")
		in := rec.next(t)
		if in.ChatID != "100" || in.SenderID != "200" || in.Text != "hello bot" || in.ChatType != messages.ChatDirect || in.MessageID == "" {
			t.Errorf("inbound = %+v, want chat 100, sender 200, text, direct chat and a message id", in)
		}
	})
	t.Run("order", func(t *testing.T) {
		ch, p := setup(t)
		rec := newRecorder()
		start(t, ch, rec)
		for _, text := range []string{"one", "two", "three"} {
			p.UserSays(t, "100", "200", text)
		}
		for _, want := range []string{"one", "two", "three"} {
			if got := rec.next(t).Text; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		}
	})
	t.Run("redelivery until accepted", func(t *testing.T) {
		ch, p := setup(t)
		if !p.Redelivers() {
			t.Skip("the platform does not redeliver")
		}
		rec := newRecorder()
		rec.fail = 1
		start(t, ch, rec)
		p.UserSays(t, "100", "200", "keep me")
		if got := rec.next(t).Text; got != "keep me" {
			t.Errorf("after a failed delivery got %q, want the same message again", got)
		}
	})
	t.Run("send chunks", func(t *testing.T) {
		ch, p := setup(t)
		start(t, ch, newRecorder())
		limit, measure := p.Limit()
		text := strings.Repeat("word ", limit/5) + "\n\n```go\n" + strings.Repeat("x := 1\n", limit/7) + "```\n\nThe end. 😀"
		ids, err := ch.Send(context.Background(), messages.Outbound{ChatID: "100", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		sent := p.Sent("100")
		if len(sent) < 2 || len(ids) != len(sent) {
			t.Fatalf("sent %d messages with %d ids, want at least 2 chunks with one id each", len(sent), len(ids))
		}
		for _, s := range sent {
			if measure(s) > limit {
				t.Errorf("a chunk measures %d, over the limit %d", measure(s), limit)
			}
		}
		joined := strings.Join(sent, "")
		for _, want := range []string{"word word", "x := 1", "The end. 😀"} {
			if !strings.Contains(joined, want) {
				t.Errorf("sent text lacks %q", want)
			}
		}
	})
	t.Run("reconnect", func(t *testing.T) {
		ch, p := setup(t)
		rec := newRecorder()
		start(t, ch, rec)
		p.UserSays(t, "100", "200", "before")
		rec.next(t)
		p.Drop()
		p.UserSays(t, "100", "200", "after")
		if got := rec.next(t).Text; got != "after" {
			t.Errorf("after a dropped connection got %q, want %q", got, "after")
		}
	})
}
