package discord_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

// window is the fake's identify window in these tests (Discord's is 5 s); the bot waits a
// little longer between IDENTIFYs of one bucket.
const window = 150 * time.Millisecond

// runSharded starts a bot with cfg (token and API base filled in) against srv, pacing its
// IDENTIFYs to the fake's window; the test's end stops it and checks Run returned nil.
func runSharded(t *testing.T, srv *discordtest.Server, cfg discord.Config) *running {
	t.Helper()
	cfg.Token, cfg.APIBase = srv.Token(), srv.URL
	bot, err := discord.New(cfg, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatal(err)
	}
	bot.SetIdentifyEvery(window + 50*time.Millisecond)
	r := &running{bot: bot, srv: srv, got: make(chan messages.Inbound, 100), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() {
		r.done <- bot.Run(ctx, func(_ context.Context, in messages.Inbound) error {
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

// expectTexts collects len(want) deliveries and compares them as a set (shards deliver
// concurrently).
func (r *running) expectTexts(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	for range want {
		got = append(got, r.next(t).Text)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("delivered %q, want %q", got, want)
	}
}

// expectDistinct collects deliveries until every text in want came, ignoring a message
// delivered again (after a new session the bot reads its gap over REST, and reef's dedup
// drops what the gateway told it as well).
func (r *running) expectDistinct(t *testing.T, want ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, w := range want {
		left[w] = true
	}
	seen := map[string]string{} // message id → text
	for len(left) > 0 {
		in := r.next(t)
		if text, ok := seen[in.MessageID]; ok && text == in.Text {
			continue
		}
		seen[in.MessageID] = in.Text
		if !left[in.Text] {
			t.Fatalf("delivered %q, want one of %v", in.Text, left)
		}
		delete(left, in.Text)
	}
}

// TestShardsOnOneNode: the bot runs as many shards as /gateway/bot recommends (or as many as
// config fixes), each identified with its [shard_id, num_shards], paced per max_concurrency
// bucket; a guild message on every shard and a DM (shard 0's) each reach reef once.
// Before sharding, the bot identified without a shard array and the fake closed it (4011).
func TestShardsOnOneNode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                       string
		recommended, fixed, maxCon int
		want                       int
	}{
		{name: "two shards as recommended", recommended: 2, maxCon: 1, want: 2},
		{name: "four shards, two at a time", recommended: 4, maxCon: 2, want: 4},
		{name: "three shards fixed in config", recommended: 2, fixed: 3, maxCon: 1, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := discordtest.New(t, discordtest.Config{Shards: tt.recommended, MaxConcurrency: tt.maxCon, IdentifyWindow: window})
			r := runSharded(t, srv, discord.Config{Shards: tt.fixed})
			var want []string
			for i := range tt.want {
				text := fmt.Sprintf("hello shard %d", i)
				srv.GuildMessage(t, discordtest.GuildOnShard(i, tt.want, 1), fmt.Sprintf("c%d", i), "8", text)
				want = append(want, text)
			}
			srv.UserSays(t, "dm1", "7", "a direct message")
			r.expectTexts(t, append(want, "a direct message")...)
			r.nothing(t)
			var shards []string
			for _, s := range srv.ShardIdentifies() {
				if s == nil {
					t.Fatal("an IDENTIFY without a shard array")
				}
				shards = append(shards, fmt.Sprint(*s))
			}
			slices.Sort(shards)
			var wantShards []string
			for i := range tt.want {
				wantShards = append(wantShards, fmt.Sprint([2]int{i, tt.want}))
			}
			slices.Sort(wantShards)
			if !slices.Equal(shards, wantShards) {
				t.Errorf("identified %v, want %v", shards, wantShards)
			}
			if n := srv.RateLimited(); n != 0 {
				t.Errorf("%d IDENTIFYs came too fast for their bucket", n)
			}
		})
	}
}

// TestOneShardSendsNoShardArray: a bot Discord gives one shard identifies as before.
func TestOneShardSendsNoShardArray(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := runSharded(t, srv, discord.Config{})
	srv.GuildMessage(t, "g1", "c1", "8", "hello")
	r.expectTexts(t, "hello")
	if ids := srv.ShardIdentifies(); len(ids) != 1 || ids[0] != nil {
		t.Errorf("identifies %v, want one without a shard array", ids)
	}
}

// TestReshardRestartsWithTheNewCount: when Discord closes the shards with 4011 (the bot
// outgrew them), the bot asks /gateway/bot again and runs the new count.
func TestReshardRestartsWithTheNewCount(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 2, IdentifyWindow: window})
	r := runSharded(t, srv, discord.Config{})
	srv.UserSays(t, "dm1", "7", "before")
	r.expectTexts(t, "before")
	srv.SetShards(3)
	eventually(t, "three shards", func() bool { return slices.Equal(srv.LiveShards(), []int{0, 1, 2}) })
	g := discordtest.GuildOnShard(2, 3, 5)
	srv.GuildMessage(t, g, "c9", "8", "on the new shard")
	srv.UserSays(t, "dm1", "7", "after")
	r.expectDistinct(t, "on the new shard", "after")
	for _, s := range srv.ShardIdentifies()[2:] {
		if s == nil || s[1] != 3 {
			t.Errorf("IDENTIFY %v after the reshard, want a count of 3", s)
		}
	}
}

// TestFixedShardsTooFewStopRun: a count fixed in config that Discord refuses (4011) is the
// user's to change: Run stops with ErrAuth and says so.
func TestFixedShardsTooFewStopRun(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 3, IdentifyWindow: -1})
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL, Shards: 2}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil })
	if !errors.Is(err, channels.ErrAuth) || ctx.Err() != nil {
		t.Fatalf("Run = %v, want ErrAuth", err)
	}
	if want := "shards: auto"; !strings.Contains(err.Error(), want) {
		t.Errorf("Run = %v, want it to mention %q", err, want)
	}
}

// TestWaitsForSessionStarts: with no session starts left, the bot waits for the limit to
// reset rather than identify (Discord would end every session and reset the token).
func TestWaitsForSessionStarts(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{SessionStarts: 10, SessionStartsRemaining: 0,
		SessionStartsReset: 500 * time.Millisecond})
	r := runSharded(t, srv, discord.Config{})
	srv.UserSays(t, "dm1", "7", "after the reset")
	r.expectTexts(t, "after the reset")
	if n := srv.Identifies(); n != 1 {
		t.Errorf("%d IDENTIFYs, want 1 (after the reset)", n)
	}
	if n := srv.SessionStartsRemaining(); n != 9 {
		t.Errorf("%d session starts left, want 9", n)
	}
}

// TestEachShardReadsOnlyItsOwnGaps: after a new session a shard reads the history of its own
// guilds' channels; DMs and channels known only from the state file (guild unknown) are
// shard 0's, so every gap is read once, by one shard.
func TestEachShardReadsOnlyItsOwnGaps(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	bot.Seen("c-one", discordtest.GuildOnShard(1, 2, 1), "1001")
	bot.Seen("c-zero", discordtest.GuildOnShard(0, 2, 1), "1002")
	bot.Seen("dm1", "", "1003")
	bot.SeenBeforeRestart("c-old", "999")
	keys := func(m map[string]string) []string {
		out := slices.Collect(maps.Keys(m))
		slices.Sort(out)
		return out
	}
	if got, want := keys(bot.Served(0, 2)), []string{"c-old", "c-zero", "dm1"}; !slices.Equal(got, want) {
		t.Errorf("shard 0 reads %v, want %v", got, want)
	}
	if got, want := keys(bot.Served(1, 2)), []string{"c-one"}; !slices.Equal(got, want) {
		t.Errorf("shard 1 reads %v, want %v", got, want)
	}
	if got, want := keys(bot.Served(0, 1)), []string{"c-old", "c-one", "c-zero", "dm1"}; !slices.Equal(got, want) {
		t.Errorf("one shard reads %v, want %v", got, want)
	}
}

// TestFatalCloseAfterRefusedResumeEndsRun: Discord refuses a RESUME (op 9), discordgo
// identifies on the same socket and reports success, and Discord then closes with a fatal
// code (here 4011: the bot needs more shards). The reconnect counts that as a failed
// attempt, not a success, so Run ends (its caller starts it afresh) instead of identifying
// again and again, which would spend the day's session starts.
func TestFatalCloseAfterRefusedResumeEndsRun(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	bot.SetReconnectWaits(0, 10*time.Millisecond, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil }) }()
	eventually(t, "a connection", srv.Connected)
	srv.ExpireSessions() // the RESUME gets op 9; the IDENTIFY on its socket is closed with 4011
	srv.SetShards(2)
	err := <-done
	if ctx.Err() != nil {
		t.Fatalf("Run kept reconnecting until the deadline (%d IDENTIFYs)", srv.Identifies())
	}
	if err == nil || !strings.HasPrefix(err.Error(), "discord: ") {
		t.Errorf("Run = %v, want a discord: error so that the connector starts it afresh", err)
	}
	if n := srv.Identifies(); n > 5 {
		t.Errorf("%d IDENTIFYs, want one per attempt at most", n)
	}
}
