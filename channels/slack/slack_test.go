package slack_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/messages"
)

// newBot returns a bot in Socket Mode against a fresh fake Slack.
func newBot(t *testing.T, cfg slacktest.Config) (*slack.Bot, *slacktest.Server) {
	t.Helper()
	srv := slacktest.New(t, cfg)
	c := srv.Config()
	b, err := slack.New(slack.Config{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: srv.APIURL,
		MediaClient: &http.Client{Timeout: 10 * time.Second}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	return b, srv
}

func TestConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) (channels.Channel, channeltest.Platform) {
		b, srv := newBot(t, slacktest.Config{AckTimeout: time.Second})
		return b, srv
	})
}

// inbox is a Deliver that records what reef accepted.
type inbox struct{ ch chan messages.Inbound }

func newInbox() *inbox { return &inbox{ch: make(chan messages.Inbound, 100)} }

func (i *inbox) deliver(_ context.Context, in messages.Inbound) error {
	i.ch <- in
	return nil
}

func (i *inbox) next(t *testing.T) messages.Inbound {
	t.Helper()
	select {
	case in := <-i.ch:
		return in
	case <-time.After(10 * time.Second):
		t.Fatal("no message delivered")
		return messages.Inbound{}
	}
}

// none fails when a message arrives within d.
func (i *inbox) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case in := <-i.ch:
		t.Fatalf("unexpected message %+v", in)
	case <-time.After(d):
	}
}

func run(t *testing.T, b *slack.Bot, deliver channels.Deliver) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, deliver) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func TestMentionInChannelStartsThread(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	in := newInbox()
	run(t, b, in.deliver)
	ts := srv.Post(slacktest.UserMessage{Channel: "C1", User: "U1", Text: "<@" + slacktest.DefaultBotUserID + "> what &amp; why &lt;3"})
	got := in.next(t)
	if got.ChatType != messages.ChatThread || got.ThreadID != ts || got.ChatID != "C1" || !got.Mentioned || got.Text != "what & why <3" {
		t.Fatalf("inbound = %+v, want a mentioned thread %s in C1 with the text unescaped", got, ts)
	}
	in.none(t, 300*time.Millisecond) // the app_mention and the message event are one message
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "C1", ThreadID: got.ThreadID, Text: "**yes** & <no>"})
	if err != nil || len(ids) != 1 {
		t.Fatalf("Send = %v, %v", ids, err)
	}
	msgs := srv.Messages("C1")
	last := msgs[len(msgs)-1]
	if last.ThreadTS != ts || last.Text != "*yes* &amp; &lt;no&gt;" {
		t.Errorf("reply = %+v, want mrkdwn in thread %s", last, ts)
	}
	// A reply in that thread without a mention is still for the bot.
	srv.Post(slacktest.UserMessage{Channel: "C1", User: "U1", Text: "and then?", ThreadTS: ts})
	if got := in.next(t); got.ThreadID != ts || !got.Mentioned {
		t.Errorf("thread reply = %+v, want thread %s, mentioned", got, ts)
	}
	// A channel message without a mention reaches reef unmentioned (the access rules decide).
	srv.Post(slacktest.UserMessage{Channel: "C1", User: "U1", Text: "chatter"})
	if got := in.next(t); got.Mentioned {
		t.Errorf("chatter = %+v, want not mentioned", got)
	}
}

func TestAckOnlyAfterAccepted(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{AckTimeout: 500 * time.Millisecond})
	refusals := 3 // every try of the first delivery: the envelope stays unacknowledged
	var mu sync.Mutex
	in := newInbox()
	run(t, b, func(ctx context.Context, m messages.Inbound) error {
		mu.Lock()
		defer mu.Unlock()
		if refusals > 0 {
			refusals--
			return errors.New("storage unavailable")
		}
		return in.deliver(ctx, m)
	})
	srv.UserSays(t, "D1", "U1", "keep me")
	if got := in.next(t); got.Text != "keep me" {
		t.Fatalf("got %q", got.Text)
	}
	waitFor(t, func() bool { return srv.Acked() == 1 && srv.Pending() == 0 })
	if srv.Lost() != 0 || srv.BadAcks() != 0 {
		t.Errorf("lost %d envelopes, %d acks of unknown envelopes", srv.Lost(), srv.BadAcks())
	}
	in.none(t, 300*time.Millisecond)
}

func TestClientDuplicateDelivesOnce(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	in := newInbox()
	run(t, b, in.deliver)
	srv.Post(slacktest.UserMessage{Channel: "D1", User: "U1", Text: "once", ClientMsgID: "same"})
	srv.Post(slacktest.UserMessage{Channel: "D1", User: "U1", Text: "once", ClientMsgID: "same"})
	in.next(t)
	in.none(t, 300*time.Millisecond)
	waitFor(t, func() bool { return srv.Acked() == 2 })
}

func TestDisconnectLosesNothing(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{AckTimeout: time.Second})
	in := newInbox()
	run(t, b, in.deliver)
	srv.UserSays(t, "D1", "U1", "first")
	in.next(t)
	const n = 30
	for i := range n {
		if i == n/2 {
			srv.Disconnect("refresh_requested", 2*time.Second)
		}
		srv.UserSays(t, "D1", "U1", "m"+string(rune('a'+i)))
	}
	seen := map[string]bool{}
	for len(seen) < n {
		seen[in.next(t).Text] = true
	}
	waitFor(t, func() bool { return srv.Pending() == 0 })
	if srv.Lost() != 0 || srv.Connections() < 2 {
		t.Errorf("lost %d, connections %d; want 0 lost and a second connection", srv.Lost(), srv.Connections())
	}
}

func TestRateLimitWaitsRetryAfter(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	srv.RateLimit("chat.postMessage", 1)
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "D1", Text: "after the 429"})
	if err != nil || len(ids) != 1 {
		t.Fatalf("Send = %v, %v", ids, err)
	}
	if n := srv.Calls("chat.postMessage"); n != 2 {
		t.Errorf("chat.postMessage called %d times, want 2 (a 429, then the send)", n)
	}
}

func TestLongReplyWithinLimits(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	text := strings.Repeat("a & b < c ", 3000) // escaping makes the mrkdwn longer than the source
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "D1", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.Sent("D1")
	if len(ids) != len(sent) || len(sent) < 8 {
		t.Fatalf("%d ids, %d messages", len(ids), len(sent))
	}
	for _, s := range sent {
		if n := len([]rune(s)); n > slack.MaxMessage {
			t.Errorf("a message of %d characters", n)
		}
	}
}

func TestEditAndPermanentErrors(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	ctx := context.Background()
	ids, err := b.Send(ctx, messages.Outbound{ChatID: "D1", Text: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Edit(ctx, "D1", ids[0], "_final_"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Sent("D1"); len(got) != 1 || got[0] != "_final_" {
		t.Errorf("after edit: %q", got)
	}
	userTS := srv.Post(slacktest.UserMessage{Channel: "D1", User: "U1", Text: "mine"})
	if err := b.Edit(ctx, "D1", userTS, "x"); !errorsIs(err, channels.ErrPermanent) {
		t.Errorf("editing a person's message: %v, want ErrPermanent", err)
	}
	srv.RemoveChannel("C9")
	if _, err := b.Send(ctx, messages.Outbound{ChatID: "C9", Text: "x"}); !errorsIs(err, channels.ErrPermanent) {
		t.Errorf("send to a gone channel: %v, want ErrPermanent", err)
	}
	if err := b.Delete(ctx, "D1", ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := srv.Sent("D1"); len(got) != 0 {
		t.Errorf("after delete: %q", got)
	}
}

func TestFilesBothWays(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	in := newInbox()
	run(t, b, in.deliver)
	srv.Post(slacktest.UserMessage{Channel: "D1", User: "U1", Text: "look",
		Files: []slacktest.FileSpec{{Name: "a.png", Mimetype: "image/png", Data: []byte("PNGDATA")}}})
	got := in.next(t)
	if len(got.Media) != 1 || got.Media[0].Kind != messages.MediaImage {
		t.Fatalf("media = %+v", got.Media)
	}
	rc, err := b.Fetch(context.Background(), got.Media[0])
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "PNGDATA" {
		t.Errorf("downloaded %q", data)
	}
	// The token goes to Slack's hosts only.
	if _, err := b.Fetch(context.Background(), messages.Media{Ref: "http://127.0.0.2:1/steal"}); err == nil {
		t.Error("a non-Slack url was fetched with the token")
	}
	dir := t.TempDir()
	writeFile(t, dir, "out.txt", "hello file")
	if _, err := b.Send(context.Background(), messages.Outbound{ChatID: "D1", Text: "here",
		Media: []messages.Media{{Root: dir, Path: "out.txt"}}}); err != nil {
		t.Fatal(err)
	}
	ups := srv.Uploads("D1")
	if len(ups) != 1 || string(ups[0].Data) != "hello file" || ups[0].Name != "out.txt" {
		t.Errorf("uploads = %+v", ups)
	}
}

func TestSlashCommandIsMessageText(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	in := newInbox()
	run(t, b, in.deliver)
	srv.SlashCommand("D1", "U1", "/new", "fresh start")
	got := in.next(t)
	if got.Text != "/new fresh start" || got.ChatID != "D1" || got.SenderID != "U1" || got.ChatType != messages.ChatDirect {
		t.Errorf("inbound = %+v, want /new fresh start from U1 in the DM", got)
	}
	waitFor(t, func() bool { return srv.Acked() == 1 })
}
