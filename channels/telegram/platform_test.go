package telegram

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

// platform adapts the fake Bot API to channeltest.Platform.
type platform struct{ s *telegramtest.Server }

func (p platform) UserSays(t *testing.T, chatID, senderID, text string) {
	t.Helper()
	p.s.UserSays(mustID(t, chatID), mustID(t, senderID), text)
}

func (p platform) Sent(chatID string) []string {
	id, _ := strconv.ParseInt(chatID, 10, 64)
	return p.s.Sent(id)
}

func (p platform) Drop()                          { p.s.Drop() }
func (p platform) Limit() (int, channels.Measure) { return MaxMessage, channels.UTF16 }
func (p platform) Redelivers() bool               { return true }

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return id
}

func TestConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) (channels.Channel, channeltest.Platform) {
		s := telegramtest.New(t)
		b, _ := newTestBot(t, s, nil)
		return b, platform{s}
	})
}

// logBuffer collects log lines from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newTestBot returns a polling bot on the fake with short waits; change edits its config.
func newTestBot(t *testing.T, s *telegramtest.Server, change func(*Config)) (*Bot, *logBuffer) {
	t.Helper()
	cfg := Config{Token: telegramtest.Token, APIRoot: s.URL, PollTimeout: time.Second}
	if change != nil {
		change(&cfg)
	}
	logs := &logBuffer{}
	b, err := New(cfg, zerolog.New(logs).Level(zerolog.DebugLevel))
	if err != nil {
		t.Fatal(err)
	}
	b.timing.retryMin, b.timing.retryMax = 5*time.Millisecond, 50*time.Millisecond
	b.timing.conflictWait, b.timing.callTimeout = 10*time.Millisecond, 10*time.Second
	return b, logs
}

// inbox is a Deliver that records messages and fails while fail returns an error.
type inbox struct {
	mu   sync.Mutex
	got  []messages.Inbound
	ch   chan messages.Inbound
	fail func(messages.Inbound) error
}

func newInbox() *inbox { return &inbox{ch: make(chan messages.Inbound, 100)} }

func (i *inbox) deliver(_ context.Context, in messages.Inbound) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.fail != nil {
		if err := i.fail(in); err != nil {
			return err
		}
	}
	i.got = append(i.got, in)
	i.ch <- in
	return nil
}

func (i *inbox) next(t *testing.T) messages.Inbound {
	t.Helper()
	select {
	case in := <-i.ch:
		return in
	case <-time.After(10 * time.Second):
		t.Fatal("no inbound message delivered in time")
		return messages.Inbound{}
	}
}

// run runs b until the test ends and returns a channel with Run's result.
func run(t *testing.T, b *Bot, deliver channels.Deliver) (cancel func(), done <-chan error) {
	t.Helper()
	ctx, cancelFn := context.WithCancel(context.Background())
	res, finished := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(finished)
		res <- b.Run(ctx, deliver)
	}()
	t.Cleanup(func() {
		cancelFn()
		select {
		case <-finished:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of cancel")
		}
	})
	return cancelFn, res
}

// eventually polls cond (bounded) until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

func contains(haystack, needle string) bool { return strings.Contains(haystack, needle) }
