package feishu_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

// sendBot returns a fake and a bot that is not running (Send needs no connection).
func sendBot(t *testing.T, cfg feishutest.Config) (*feishutest.Server, *feishu.Bot) {
	t.Helper()
	srv := feishutest.New(t, cfg)
	bot, err := feishu.New(srv.BotConfig(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return srv, bot
}

func longText() string {
	return strings.Repeat("Some words to fill the line. ", 120) + "\n\n```python\n" +
		strings.Repeat("print('hello, world')  # 😀\n", 250) + "```\n\nThat is all. 飞书"
}

func TestSendChunksReplyFirst(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	mid := srv.UserSays("oc_dm", "ou_alice", "write me a program")
	text := longText()
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", ReplyToID: mid, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) < 3 || len(ids) != len(msgs) {
		t.Fatalf("sent %d messages with %d ids, want at least 3 chunks, one id each", len(msgs), len(ids))
	}
	var joined strings.Builder
	for i, m := range msgs {
		if m.ID != ids[i] || m.ChatID != "oc_dm" || m.MsgType != "post" {
			t.Errorf("message %d = %+v, want post %s in oc_dm", i, m, ids[i])
		}
		if n := channels.Runes(m.Text); n > feishu.Limit {
			t.Errorf("chunk %d has %d runes, over %d", i, n, feishu.Limit)
		}
		if fences := strings.Count(m.Text, "```"); fences%2 != 0 {
			t.Errorf("chunk %d has %d fence markers: a code block is left open", i, fences)
		}
		if want := map[bool]string{true: mid, false: ""}[i == 0]; m.ReplyTo != want {
			t.Errorf("chunk %d replies to %q, want %q", i, m.ReplyTo, want)
		}
		joined.WriteString(m.Text)
	}
	for _, want := range []string{"fill the line.", "print('hello, world')  # 😀", "That is all. 飞书", "```python"} {
		if !strings.Contains(joined.String(), want) {
			t.Errorf("sent text lacks %q", want)
		}
	}
}

func TestSendIdempotentPerOutboxRow(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	out := messages.Outbound{ChatID: "oc_dm", Text: longText(), SessionKey: "agent:main:feishu:direct:ou_alice", OutboxSeq: 7}
	first, err := bot.Send(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bot.Send(context.Background(), out) // a retry after a crash
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Messages()); n != len(first) || strings.Join(first, ",") != strings.Join(again, ",") {
		t.Errorf("a repeated Send made %d messages (ids %v then %v), want %d and the same ids", n, first, again, len(first))
	}
}

func TestSendThreadAndGoneReplyTarget(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	_, mid := srv.Push(feishutest.Message{ChatID: "oc_g", ChatType: "group", ThreadID: "omt_1", SenderID: "ou_alice", Text: "q"})
	if _, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_g", ThreadID: "omt_1", ReplyToID: mid, Text: longText()}); err != nil {
		t.Fatal(err)
	}
	for i, m := range srv.Messages() {
		if m.ReplyTo != mid || !m.InThread {
			t.Errorf("thread chunk %d replies to %q in thread %v, want every chunk in the thread of %s", i, m.ReplyTo, m.InThread, mid)
		}
	}
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_x", ReplyToID: "om_deleted", Text: "still here"})
	if err != nil || len(ids) != 1 {
		t.Fatalf("reply to a deleted message: ids %v, err %v; want it sent to the chat", ids, err)
	}
	if got := srv.Sent("oc_x"); len(got) != 1 || got[0] != "still here" {
		t.Errorf("chat oc_x got %q, want the reply posted to the chat", got)
	}
}

func TestSendErrors(t *testing.T) {
	tests := []struct {
		code      int
		permanent bool
	}{
		{230002, true},   // bot not in chat
		{230027, true},   // no permission
		{99991672, true}, // scope missing
		{500, false},     // server error: retry later
		{230001 + 1000, false},
	}
	for _, tt := range tests {
		srv, bot := sendBot(t, feishutest.Config{})
		srv.FailNext("create", tt.code)
		_, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: "hi"})
		if err == nil || errors.Is(err, channels.ErrPermanent) != tt.permanent || !strings.HasPrefix(err.Error(), "feishu: ") {
			t.Errorf("code %d: err = %v, want a feishu: error, permanent %v", tt.code, err, tt.permanent)
		}
	}
}

func TestSendRateLimit(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{RateLimitReset: 150 * time.Millisecond})
	srv.FailNext("create", 99991400)
	srv.FailNext("create", 429)
	start := time.Now()
	if _, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: "hi"}); err != nil {
		t.Fatalf("Send after two rate limits: %v", err)
	}
	if took, n := time.Since(start), srv.Requests("create"); took < 300*time.Millisecond || n != 3 {
		t.Errorf("took %v with %d requests, want the 150 ms reset honoured twice and 3 requests", took, n)
	}

	srv, bot = sendBot(t, feishutest.Config{RateLimitReset: 10 * time.Second})
	for range 3 {
		srv.FailNext("create", 99991400)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err := bot.Send(ctx, messages.Outbound{ChatID: "oc_dm", Text: "hi"})
	if err == nil || errors.Is(err, channels.ErrPermanent) || time.Since(start) > 5*time.Second {
		t.Errorf("Send under a long rate limit = %v after %v, want a prompt transient error", err, time.Since(start))
	}
}

func TestEdit(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.Edit(context.Background(), "oc_dm", ids[0], "final **answer**"); err != nil {
		t.Fatal(err)
	}
	if m := srv.Messages()[0]; m.Text != "final **answer**" || m.Edits != 1 {
		t.Errorf("after Edit the message is %q (%d edits), want the new text", m.Text, m.Edits)
	}
	if err := bot.Edit(context.Background(), "oc_dm", "om_nope", "x"); err == nil {
		t.Error("Edit of an unknown message succeeded")
	}
	if ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: " \n"}); err != nil || ids != nil {
		t.Errorf("Send of blank text = %v, %v; want nothing sent", ids, err)
	}
}

// TestSendCapsChunks: a reply past Outbound.MaxChunks messages is cut to that many, the last
// one a note (#20 finding 8).
func TestSendCapsChunks(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: longText(), MaxChunks: 2})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 2 || len(ids) != 2 {
		t.Fatalf("sent %d messages with %d ids, want 2", len(msgs), len(ids))
	}
	if !strings.Contains(msgs[1].Text, "too long to send in full") {
		t.Errorf("last message = %q, want the note", msgs[1].Text)
	}
}
