package discord_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

// memState is a discord.SharedState in memory: the cluster's database for two nodes.
type memState struct {
	mu  sync.Mutex
	raw []byte
}

func (s *memState) Load(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw, nil
}

func (s *memState) Update(_ context.Context, merge func([]byte) ([]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := merge(s.raw)
	if err == nil {
		s.raw = next
	}
	return err
}

// TestTakeOverReadsWhatThePreviousNodeDidNotStore: a node of a cluster receives two
// messages in a DM and a first one in a new DM, and dies before reef stored the last two
// (Discord replays nothing). The
// node that takes the bot's shard over reads the history after the last message any node
// handled, from the shared checkpoint, and delivers the second message. Node B runs from the
// start, waiting for the shard, so what it read of the checkpoint then is stale.
func TestTakeOverReadsWhatThePreviousNodeDidNotStore(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	srv.AddChannel(discordtest.Channel{ID: "dm1", Type: 1})
	srv.AddChannel(discordtest.Channel{ID: "dm2", Type: 1})
	state := &memState{}
	node := func(g *channeltest.Gate, deliver func(messages.Inbound) error) (stop func()) {
		bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL, Gate: g, State: state}, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = bot.Run(ctx, func(_ context.Context, in messages.Inbound) error { return deliver(in) })
		}()
		return func() { cancel(); <-done }
	}

	var mu sync.Mutex
	var storedA, storedB []string
	dying := make(chan struct{})
	gateA, gateB := channeltest.NewGate(), channeltest.NewGate()
	gateA.Grant()
	stopB := node(gateB, func(in messages.Inbound) error {
		mu.Lock()
		defer mu.Unlock()
		storedB = append(storedB, in.Text)
		return nil
	})
	defer stopB()
	stopA := node(gateA, func(in messages.Inbound) error {
		mu.Lock()
		defer mu.Unlock()
		if len(storedA) == 1 { // the node dies while the second message is on its way in
			<-dying
			return context.Canceled
		}
		storedA = append(storedA, in.Text)
		return nil
	})
	eventually(t, "node A connected", srv.Connected)
	srv.UserSays(t, "dm1", "u1", "first")
	eventually(t, "node A stored the first message", func() bool { mu.Lock(); defer mu.Unlock(); return len(storedA) == 1 })
	srv.UserSays(t, "dm1", "u1", "second")
	srv.UserSays(t, "dm2", "u2", "fresh") // a new chat, queued behind "second"
	eventually(t, "node A noted the new chat as it arrived", func() bool {
		raw, _ := state.Load(context.Background())
		return strings.Contains(string(raw), `"dm2"`)
	})
	close(dying)
	stopA()

	gateB.Grant() // A's lease ran out
	eventually(t, "node B read the message node A did not store", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(storedB, "second") && slices.Contains(storedB, "fresh")
	})
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(storedB, "first") {
		t.Errorf("node B delivered again the message node A stored: %q", storedB)
	}
}
