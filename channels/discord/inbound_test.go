package discord_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

func TestNormalise(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	bot := srv.BotID()
	ctx := context.Background()

	// A direct message.
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	id := srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", AuthorName: "ann", GlobalName: "Ann B.", Content: "hello", Time: at})
	in := r.next(t)
	want := messages.Inbound{Channel: "discord", ChatID: "dm1", ChatType: messages.ChatDirect, SenderID: "7", SenderName: "Ann B.",
		MessageID: id, Text: "hello", Mentioned: true, Time: at}
	if !in.Time.Equal(at) {
		t.Errorf("time = %v, want %v", in.Time, at)
	}
	in.Time = at
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("direct message (-want +got):\n%s", diff)
	}

	// A guild message without a mention: a group chat, not mentioned; username as name.
	srv.GuildMessage(t, "g1", "c1", "8", "just chatting")
	in = r.next(t)
	if in.ChatType != messages.ChatGroup || in.ChatID != "c1" || in.Mentioned || in.SenderName != "user-8" || in.ThreadID != "" {
		t.Errorf("guild message = %+v, want group chat c1, not mentioned, sender user-8", in)
	}

	// Mentions, in both token forms, are stripped from the text.
	for _, content := range []string{"<@" + bot + "> what time is it?", "hey <@!" + bot + "> what time is it?"} {
		srv.Say(t, discordtest.Message{GuildID: "g1", ChannelID: "c1", AuthorID: "8", Content: content, Mentions: []string{bot}})
		in = r.next(t)
		wantText := strings.TrimPrefix(strings.ReplaceAll(content, "<@!"+bot+"> ", ""), "<@"+bot+"> ")
		if !in.Mentioned || in.Text != wantText {
			t.Errorf("mention %q: mentioned %v, text %q; want mentioned, text %q", content, in.Mentioned, in.Text, wantText)
		}
	}
	// Someone else's mention does not count.
	srv.Say(t, discordtest.Message{GuildID: "g1", ChannelID: "c1", AuthorID: "8", Content: "<@5> look", Mentions: []string{"5"}})
	if in = r.next(t); in.Mentioned || in.Text != "<@5> look" {
		t.Errorf("mention of another user: %+v, want not mentioned and the text kept", in)
	}

	// A reply to one of the bot's messages counts as a mention and quotes it.
	ids, err := r.bot.Send(ctx, messages.Outbound{ChatID: "c1", Text: "It is noon."})
	if err != nil {
		t.Fatal(err)
	}
	srv.Say(t, discordtest.Message{GuildID: "g1", ChannelID: "c1", AuthorID: "8", Content: "thanks", ReplyTo: ids[0]})
	if in = r.next(t); !in.Mentioned || in.ReplyTo != "It is noon." || in.Text != "thanks" {
		t.Errorf("reply to the bot: %+v, want mentioned with ReplyTo the bot's text", in)
	}
	// Files come as Media to download before the run, with or without text.
	srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", Attachments: []string{"cat.png|image/png"}})
	if in = r.next(t); in.Text != "" || len(in.Media) != 1 || in.Media[0].Kind != messages.MediaImage || in.Media[0].Name != "cat.png" {
		t.Errorf("an image alone = %q %+v, want it as an image", in.Text, in.Media)
	}
	srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", Content: "see the report", Attachments: []string{"q3.pdf|application/pdf"}})
	if in = r.next(t); in.Text != "see the report" || len(in.Media) != 1 || in.Media[0].Kind != messages.MediaDocument || in.Media[0].MIME != "application/pdf" {
		t.Errorf("text with a file = %q %+v", in.Text, in.Media)
	}
	// A reply to someone else quotes it but is no mention.
	other := srv.GuildMessage(t, "g1", "c1", "9", "original")
	r.next(t)
	srv.Say(t, discordtest.Message{GuildID: "g1", ChannelID: "c1", AuthorID: "8", Content: "+1", ReplyTo: other})
	if in = r.next(t); in.Mentioned || in.ReplyTo != "original" {
		t.Errorf("reply to a person: %+v, want not mentioned, ReplyTo %q", in, "original")
	}
}

func TestThreads(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	for i, text := range []string{"in a thread", "again"} {
		srv.ThreadMessage(t, "g1", "c1", "t1", "8", text)
		in := r.next(t)
		if in.ChatType != messages.ChatThread || in.ChatID != "c1" || in.ThreadID != "t1" || in.Text != text {
			t.Errorf("thread message %d = %+v, want thread t1 in chat c1", i, in)
		}
	}
	lookups := 0
	for _, req := range srv.Requests() {
		if req == "GET /api/v9/channels/t1" {
			lookups++
		}
	}
	if lookups != 1 {
		t.Errorf("looked the thread up %d times, want once (cached)", lookups)
	}
	// A reply to a thread message goes to the thread.
	if _, err := r.bot.Send(context.Background(), messages.Outbound{ChatID: "c1", ThreadID: "t1", Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Sent("t1"); len(got) != 1 || got[0] != "answer" || len(srv.Sent("c1")) != 0 {
		t.Errorf("sent to thread %q and to the parent %q, want the answer in the thread only", got, srv.Sent("c1"))
	}
}

func TestIgnoresBotsAndEmptyMessages(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	srv.UserSays(t, "dm1", "7", "first")
	r.next(t)
	// The bot's own message comes back as MESSAGE_CREATE; another bot speaks; a bare mention.
	if _, err := r.bot.Send(context.Background(), messages.Outbound{ChatID: "c1", Text: "my own words"}); err != nil {
		t.Fatal(err)
	}
	srv.Say(t, discordtest.Message{GuildID: "g1", ChannelID: "c1", AuthorID: "55", AuthorBot: true, Content: "beep", Mentions: []string{srv.BotID()}})
	srv.Say(t, discordtest.Message{GuildID: "g1", ChannelID: "c1", AuthorID: "8", Content: "<@" + srv.BotID() + ">", Mentions: []string{srv.BotID()}})
	srv.GuildMessage(t, "g1", "c1", "8", "a person")
	if in := r.next(t); in.Text != "a person" {
		t.Errorf("next delivered %q, want %q: bots' messages and empty text are ignored", in.Text, "a person")
	}
	r.nothing(t)
}

func TestDeliveryRetriedInOrder(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 10)
	failures := 2
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- bot.Run(ctx, func(_ context.Context, in messages.Inbound) error {
			if in.Text == "one" && failures > 0 {
				failures--
				return errors.New("storage busy")
			}
			got <- in.Text
			return nil
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	srv.UserSays(t, "dm1", "7", "one")
	srv.UserSays(t, "dm1", "7", "two")
	for _, want := range []string{"one", "two"} {
		select {
		case text := <-got:
			if text != want {
				t.Errorf("got %q, want %q", text, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q not delivered", want)
		}
	}
}
