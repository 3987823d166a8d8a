package telegram

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

// TestGatedPolling: in a cluster a node that does not hold the bot's inbound loop never
// polls (a second poller would take updates from the holder), yet learns the bot is
// reachable and sends; once it holds the loop, it polls and delivers.
func TestGatedPolling(t *testing.T) {
	s := telegramtest.New(t)
	var mu sync.Mutex
	calls := map[string]int{}
	s.OnCall(func(m string) { mu.Lock(); calls[m]++; mu.Unlock() })
	g := channeltest.NewGate()
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
	units := g.Units()
	if len(units) != 1 || units[0] != channels.InboundWork("telegram", "work") {
		t.Fatalf("units asked = %q; want channel:telegram:work", units)
	}
	g.Grant()
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
