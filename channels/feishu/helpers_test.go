package feishu_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

const wait = 10 * time.Second

// inbox records deliveries; fail, when set, decides the result of each.
type inbox struct {
	ch   chan messages.Inbound
	mu   sync.Mutex
	fail func(messages.Inbound) error
}

func newInbox() *inbox { return &inbox{ch: make(chan messages.Inbound, 100)} }

func (b *inbox) deliver(_ context.Context, in messages.Inbound) error {
	b.mu.Lock()
	fail := b.fail
	b.mu.Unlock()
	if fail != nil {
		if err := fail(in); err != nil {
			return err
		}
	}
	b.ch <- in
	return nil
}

func (b *inbox) next(t *testing.T) messages.Inbound {
	t.Helper()
	select {
	case in := <-b.ch:
		return in
	case <-time.After(wait):
		t.Fatal("nothing delivered in time")
		return messages.Inbound{}
	}
}

// none checks that nothing more was delivered once the fake has no event pending.
func (b *inbox) none(t *testing.T, srv *feishutest.Server) {
	t.Helper()
	eventually(t, func() bool { return srv.Pending() == 0 })
	select {
	case in := <-b.ch:
		t.Errorf("unexpected delivery %+v", in)
	default:
	}
}

// eventually polls cond (bounded) until it holds.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// run starts bot.Run until the test ends, checking it returns nil promptly after cancel.
func run(t *testing.T, bot *feishu.Bot, box *inbox) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, box.deliver) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run after cancel = %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5 s of cancel")
		}
	})
}

// wsBot starts a fake and a bot on its long connection.
func wsBot(t *testing.T, log zerolog.Logger) (*feishutest.Server, *feishu.Bot, *inbox) {
	t.Helper()
	srv := feishutest.New(t, feishutest.Config{})
	bot, err := feishu.New(srv.BotConfig(), log)
	if err != nil {
		t.Fatal(err)
	}
	box := newInbox()
	run(t, bot, box)
	return srv, bot, box
}
