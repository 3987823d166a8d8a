package discord_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

// TestGatedGateway: in a cluster a node that does not hold the bot's shard never
// opens a gateway session (it would be told every message as well), yet checks the token,
// shows as reachable and sends; once it holds the loop, it identifies and receives.
func TestGatedGateway(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	srv.AddChannel(discordtest.Channel{ID: "c1", Type: 1})
	g := channeltest.NewGate()
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL, Gate: g, Account: "work"}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	reachable := make(chan struct{}, 1)
	bot.OnReachable(func() {
		select {
		case reachable <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil }) }()
	select {
	case <-reachable: // the token checked while the node waits for the loop
	case <-time.After(10 * time.Second):
		t.Fatal("a node waiting for the loop never said the bot is reachable")
	}
	if _, err := bot.Send(ctx, messages.Outbound{ChatID: "c1", Text: "sent from a node that does not receive"}); err != nil {
		t.Fatalf("send while another node holds the gateway: %v", err)
	}
	if n := srv.Identifies(); n != 0 {
		t.Fatalf("%d gateway sessions opened before the node held the loop", n)
	}
	eventually(t, "the gate asked", func() bool { return len(g.Units()) > 0 })
	units := g.Units()
	if len(units) != 1 || units[0] != "channel:discord:work:shard:0" {
		t.Fatalf("units asked = %q; want channel:discord:work:shard:0 (one shard)", units)
	}
	g.Grant()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Identifies() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the node that holds the loop never opened a gateway session")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}
