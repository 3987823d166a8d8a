package discord_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// node is one reef node of a cluster test: its database pool, a heartbeat in the members
// table, the work holder as the bot's Gate, and a bot running against the fake.
type node struct {
	name   string
	store  *postgres.Store
	holder *cluster.Holder
	stop   context.CancelFunc
	done   sync.WaitGroup
	once   sync.Once
}

const clusterTTL = 2 * time.Second

func startNode(t *testing.T, url, name string, srv *discordtest.Server, got chan<- string) *node {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n := &node{name: name, stop: cancel}
	store, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	n.store = store
	leases, err := cluster.New(ctx, store.Pool(), clusterTTL)
	if err != nil {
		t.Fatal(err)
	}
	work, err := cluster.NewWorkLeases(ctx, store.Pool(), clusterTTL)
	if err != nil {
		t.Fatal(err)
	}
	if err := leases.Heartbeat(ctx, name); err != nil {
		t.Fatal(err)
	}
	n.holder = cluster.NewHolder(work, name, zerolog.Nop())
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL, Gate: n.holder, Account: "big"},
		zerolog.New(zerolog.NewTestWriter(t)).With().Str("node", name).Logger().Level(zerolog.InfoLevel))
	if err != nil {
		t.Fatal(err)
	}
	bot.SetIdentifyEvery(window + 50*time.Millisecond)
	bot.SetSpreadEvery(100 * time.Millisecond)
	n.done.Go(func() { // the heartbeat a node's partition loop writes
		for ctx.Err() == nil {
			_ = leases.Heartbeat(ctx, name)
			select {
			case <-ctx.Done():
			case <-time.After(clusterTTL / 4):
			}
		}
	})
	n.done.Go(func() {
		err := bot.Run(ctx, func(_ context.Context, in messages.Inbound) error {
			got <- name + ": " + in.Text
			return nil
		})
		if err != nil {
			t.Errorf("%s: Run = %v", name, err)
		}
	})
	t.Cleanup(n.kill)
	return n
}

// kill ends the node as a crash would for the others: its database connections go first,
// so it neither heartbeats nor gives its leases back (they expire), then its bot stops.
func (n *node) kill() {
	n.once.Do(func() {
		n.store.Close()
		n.stop()
		n.done.Wait()
	})
}

// shards returns the shard ids whose units n holds.
func (n *node) shards() []int {
	var out []int
	for _, w := range n.holder.Held() {
		var id int
		if _, err := fmt.Sscanf(w.Name, "channel:discord:big:shard:%d", &id); err == nil {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// TestShardsSpreadOverNodesAndMove: two nodes on one PostgreSQL share a bot's four shards
// (two each, though the first node started alone and took all four); every shard and the
// DMs are answered; when a node dies, the other takes its shards over, and no shard ever
// ran on two nodes at once.
func TestShardsSpreadOverNodesAndMove(t *testing.T) {
	url := pgtest.URL(t)
	srv := discordtest.New(t, discordtest.Config{Shards: 4, MaxConcurrency: 4, IdentifyWindow: window})
	got := make(chan string, 100)
	a := startNode(t, url, "node-a", srv, got)
	within(t, 30*time.Second, "node-a holding all four shards alone", func() bool {
		return slices.Equal(a.shards(), []int{0, 1, 2, 3}) && slices.Equal(srv.LiveShards(), []int{0, 1, 2, 3})
	})
	b := startNode(t, url, "node-b", srv, got)
	within(t, 30*time.Second, "two shards on each node", func() bool {
		return len(a.shards()) == 2 && len(b.shards()) == 2 && slices.Equal(srv.LiveShards(), []int{0, 1, 2, 3})
	})
	t.Logf("node-a holds %v, node-b holds %v", a.shards(), b.shards())

	say := func(round string) map[string]bool {
		want := map[string]bool{}
		for i := range 4 {
			text := fmt.Sprintf("%s on shard %d", round, i)
			srv.GuildMessage(t, discordtest.GuildOnShard(i, 4, 1), fmt.Sprintf("c%d", i), "8", text)
			want[text] = true
		}
		srv.UserSays(t, "dm1", "7", round+" in a DM")
		want[round+" in a DM"] = true
		return want
	}
	expect := func(want map[string]bool, from map[int]string) {
		t.Helper()
		for range len(want) {
			select {
			case line := <-got:
				who, text, _ := strings.Cut(line, ": ")
				if !want[text] {
					t.Errorf("delivered %q, not expected (or twice)", line)
				}
				delete(want, text)
				shard := 0
				fmt.Sscanf(text[strings.LastIndex(text, " ")+1:], "%d", &shard)
				if strings.HasSuffix(text, "in a DM") {
					shard = 0
				}
				if from[shard] != "" && from[shard] != who {
					t.Errorf("%q delivered by %s, want %s (the node holding shard %d)", text, who, from[shard], shard)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("not delivered: %v", want)
			}
		}
	}
	holders := map[int]string{}
	for _, id := range a.shards() {
		holders[id] = "node-a"
	}
	for _, id := range b.shards() {
		holders[id] = "node-b"
	}
	expect(say("first"), holders)

	a.kill()
	within(t, 30*time.Second, "node-b holding every shard", func() bool {
		return slices.Equal(b.shards(), []int{0, 1, 2, 3}) && slices.Equal(srv.LiveShards(), []int{0, 1, 2, 3})
	})
	expect(say("after the failover"), map[int]string{0: "node-b", 1: "node-b", 2: "node-b", 3: "node-b"})
	if n := srv.Overlaps(); n != 0 {
		t.Errorf("%d times a shard was identified while another node's session of it was live", n)
	}
}

// within polls cond until it holds or d passed (the cluster's steps take lease times).
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
