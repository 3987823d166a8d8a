package discord_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

// Missed heartbeat ACKs make discordgo close the socket with 1000, which ends the session on
// Discord: the RESUME is refused, the bot identifies anew, and nothing sent in between is
// replayed. The bot reads what it missed in the channels it serves over REST: every message
// is delivered once, in order (#24 bug 2).
func TestNewSessionBackfillsMissedMessages(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{HeartbeatInterval: 50 * time.Millisecond})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "before")
	srv.GuildMessage(t, "g1", "c1", "8", "before in the guild")
	r.next(t)
	r.next(t)
	srv.HoldIdentify() // the new session starts only after the messages below
	srv.Stall(true)
	eventually(t, "the session ended by the bot's close", func() bool { return srv.Invalidated() >= 1 })
	srv.Stall(false)
	want := []string{"gap one", "gap two", "gap three"}
	for _, text := range want {
		srv.UserSays(t, "dm1", "7", text)
	}
	srv.GuildMessage(t, "g1", "c1", "8", "gap in the guild")
	if srv.Missed() < 4 {
		t.Fatalf("%d dispatches missed, want the 4 sent while the bot had no session", srv.Missed())
	}
	srv.ReleaseIdentify()
	got := map[string][]string{}
	for range 4 {
		in := r.next(t)
		got[in.ChatID] = append(got[in.ChatID], in.Text)
	}
	if len(got["dm1"]) != 3 || got["dm1"][0] != want[0] || got["dm1"][1] != want[1] || got["dm1"][2] != want[2] {
		t.Errorf("dm1 got %q after the new session, want %q in order", got["dm1"], want)
	}
	if len(got["c1"]) != 1 || got["c1"][0] != "gap in the guild" {
		t.Errorf("c1 got %q, want the guild message", got["c1"])
	}
	srv.UserSays(t, "dm1", "7", "after")
	if in := r.next(t); in.Text != "after" {
		t.Errorf("got %q, want %q", in.Text, "after")
	}
	r.nothing(t)
	if srv.Identifies() != 2 {
		t.Errorf("%d identifies, want 2 (the session was invalidated)", srv.Identifies())
	}
}

// After a dropped socket the bot RESUMEs on READY's resume_gateway_url, as Discord asks.
func TestResumeUsesResumeGatewayURL(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "one")
	r.next(t)
	srv.Drop()
	srv.UserSays(t, "dm1", "7", "two")
	if got := r.next(t).Text; got != "two" {
		t.Errorf("got %q, want %q", got, "two")
	}
	if srv.Resumes() == 0 || srv.ResumesOnResumeURL() != srv.Resumes() {
		t.Errorf("%d RESUMEs, %d of them on the resume_gateway_url; want all there", srv.Resumes(), srv.ResumesOnResumeURL())
	}
}

// Edits carry the same allowed_mentions as sends: a draft edited into a reply that says
// @everyone pings nobody (#24 bug 4).
func TestEditRestrictsMentions(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	ctx := context.Background()
	ids, err := bot.Send(ctx, messages.Outbound{ChatID: "c1", Text: "…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.Edit(ctx, "c1", ids[0], "@everyone the answer <@&55>"); err != nil {
		t.Fatal(err)
	}
	got := srv.AllowedMentions(ids[0])
	if len(got) != 2 {
		t.Fatalf("allowed_mentions of the send and the edit: %q", got)
	}
	for i, raw := range got {
		var am struct {
			Parse []string `json:"parse"`
		}
		if raw == "" || json.Unmarshal([]byte(raw), &am) != nil {
			t.Errorf("request %d carried allowed_mentions %q, want a restriction", i, raw)
			continue
		}
		for _, p := range am.Parse {
			if p == "everyone" || p == "roles" {
				t.Errorf("request %d allows %q mentions: %s", i, p, raw)
			}
		}
	}
}

// Delete removes a message the bot sent; one already gone counts as deleted (#24 bug 5).
func TestDelete(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	var del channels.Deleter = bot
	ctx := context.Background()
	ids, err := bot.Send(ctx, messages.Outbound{ChatID: "c1", Text: "…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := del.Delete(ctx, "c1", ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := srv.Deleted("c1"); len(got) != 1 || got[0] != ids[0] || len(srv.Sent("c1")) != 0 {
		t.Errorf("deleted %q, channel shows %q; want the draft gone", got, srv.Sent("c1"))
	}
	if err := del.Delete(ctx, "c1", ids[0]); err != nil {
		t.Errorf("deleting it again = %v, want nil", err)
	}
}

// In a thread the typing indicator shows in the thread, not in its parent (#24 bug 6).
func TestTypingInThread(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	var typer channels.ThreadTyper = bot
	if err := typer.TypingInThread(context.Background(), "parent", "thread"); err != nil {
		t.Fatal(err)
	}
	if srv.Typing("thread") != 1 || srv.Typing("parent") != 0 {
		t.Errorf("typing in thread %d×, in parent %d×; want the thread only", srv.Typing("thread"), srv.Typing("parent"))
	}
}

// A reply sent again after a crash (same outbox row) is not doubled: each chunk carries an
// enforced nonce, and Discord answers a repeated one with the message it made.
func TestSendRepeatedIsIdempotent(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	out := messages.Outbound{ChatID: "c1", Text: "the answer", SessionKey: "s", OutboxSeq: 7}
	first, err := bot.Send(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bot.Send(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || len(again) != 1 || first[0] != again[0] || len(srv.Sent("c1")) != 1 {
		t.Errorf("sent %v then %v, channel shows %q; want one message", first, again, srv.Sent("c1"))
	}
}

// OnReachable fires when a session starts and when it resumes: the connector then sends the
// replies that waited for Discord at once.
func TestReachableOnReadyAndResume(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	var calls atomic.Int32
	bot.OnReachable(func() { calls.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, func(context.Context, messages.Inbound) error { return nil }) }()
	defer func() { cancel(); <-done }()
	eventually(t, "reachable at READY", func() bool { return calls.Load() >= 1 })
	srv.Drop()
	eventually(t, "reachable after the RESUME", func() bool { return calls.Load() >= 2 && srv.Resumes() >= 1 })
}

func TestReact(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	var r channels.Reactor = bot
	ctx := context.Background()
	ids, err := bot.Send(ctx, messages.Outbound{ChatID: "c1", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.React(ctx, "c1", ids[0], "👍"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Reactions(ids[0]); len(got) != 1 || got[0] != "👍" {
		t.Errorf("reactions %q, want 👍", got)
	}
	if err := r.React(ctx, "c1", "999", "👍"); err == nil {
		t.Error("a reaction to an unknown message succeeded")
	}
}
