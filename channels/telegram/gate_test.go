package telegram

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

// gate hands out the unit when granted is closed; units records what was asked.
type gate struct {
	mu      sync.Mutex
	units   []string
	granted chan struct{}
}

func (g *gate) Hold(ctx context.Context, unit string) (context.Context, context.CancelFunc, error) {
	g.mu.Lock()
	g.units = append(g.units, unit)
	g.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-g.granted:
	}
	c, cancel := context.WithCancel(ctx)
	return c, cancel, nil
}

// TestGatedPolling: in a cluster a node that does not hold the bot's inbound loop never
// polls (a second poller would take updates from the holder), yet learns the bot is
// reachable and sends; once it holds the loop, it polls and delivers.
func TestGatedPolling(t *testing.T) {
	s := telegramtest.New(t)
	var mu sync.Mutex
	calls := map[string]int{}
	s.OnCall(func(m string) { mu.Lock(); calls[m]++; mu.Unlock() })
	g := &gate{granted: make(chan struct{})}
	b, _ := newTestBot(t, s, func(c *Config) { c.Gate, c.Account = g, "work" })
	reachable := make(chan struct{}, 1)
	b.OnReachable(func() {
		select {
		case reachable <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := newInbox()
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, in.deliver) }()
	<-reachable // getMe answered while the node waits for the loop
	if _, err := b.Send(ctx, messages.Outbound{ChatID: "42", Text: "sent from a node that does not poll"}); err != nil {
		t.Fatalf("send while another node polls: %v", err)
	}
	mu.Lock()
	polled := calls["getUpdates"]
	mu.Unlock()
	if polled != 0 {
		t.Fatalf("getUpdates called %d times before the node held the loop", polled)
	}
	g.mu.Lock()
	units := append([]string(nil), g.units...)
	g.mu.Unlock()
	if len(units) != 1 || units[0] != channels.InboundWork("telegram", "work") {
		t.Fatalf("units asked = %q; want channel:telegram:work", units)
	}
	close(g.granted)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		polled = calls["getUpdates"]
		mu.Unlock()
		if polled > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the node holds the loop but never polls")
		}
		time.Sleep(5 * time.Millisecond) // bounded polling of the fake's record
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}
