package feishu_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

// The platform refuses edits of a recalled message, after MaxEdits edits and past the edit
// window: each refusal is permanent, so the caller sends the text fresh instead of retrying
// an edit that cannot succeed (#24 bug 1). A rate limit is not.
func TestEditRefusalsArePermanent(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{EditWindow: time.Hour})
	ctx := context.Background()
	send := func() string {
		ids, err := bot.Send(ctx, messages.Outbound{ChatID: "oc_dm", Text: "…"})
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	recalled, worn, old := send(), send(), send()
	srv.Recall(recalled)
	srv.SetEdits(worn, feishutest.MaxEdits)
	srv.Age(old, 2*time.Hour)
	for name, id := range map[string]string{"recalled": recalled, "edited 20 times": worn, "past the edit window": old} {
		err := bot.Edit(ctx, "oc_dm", id, "the answer")
		if !errors.Is(err, channels.ErrPermanent) {
			t.Errorf("Edit of a message %s = %v, want ErrPermanent", name, err)
		}
	}
	fresh := send()
	srv.FailNext("update", 99991400)
	if err := bot.Edit(ctx, "oc_dm", fresh, "the answer"); err != nil {
		t.Errorf("Edit after one rate limit = %v, want it retried and done", err)
	}
}

// Delete recalls the message; a message already gone counts as deleted (#24 bug 5).
func TestDeleteRecalls(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	var del channels.Deleter = bot
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: "…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := del.Delete(context.Background(), "oc_dm", ids[0]); err != nil {
		t.Fatal(err)
	}
	if m := srv.Messages()[0]; !m.Recalled {
		t.Errorf("after Delete the message is %+v, want it recalled", m)
	}
	if got := srv.Sent("oc_dm"); len(got) != 0 {
		t.Errorf("the chat shows %q after the recall, want nothing", got)
	}
	if err := del.Delete(context.Background(), "oc_dm", ids[0]); err != nil {
		t.Errorf("Delete of a recalled message = %v, want nil", err)
	}
}

// The platform refuses the long connection when the app holds too many: that is not an auth
// failure, Run ends with an error the connector retries, and the error says why (#24 bug 3).
func TestConnectionLimitIsNotAuth(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	bot, err := feishu.New(srv.BotConfig(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	srv.RefuseConnections(1)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = bot.Run(ctx, newInbox().deliver)
	if err == nil || errors.Is(err, channels.ErrAuth) || !strings.Contains(err.Error(), "connection limit reached") {
		t.Fatalf("Run refused by the connection limit = %v, want a retryable error saying the connection limit was reached", err)
	}
	// The next Run (the connector's restart) connects and receives.
	box := newInbox()
	run(t, bot, box)
	srv.UserSays("oc_dm", "ou_alice", "back")
	if got := box.next(t).Text; got != "back" {
		t.Errorf("after the limit passed got %q, want the message", got)
	}
}

// The platform pushes events without waiting for the previous answer and the SDK handles
// each frame in its own goroutine: messages of one chat still reach reef in the order they
// were sent (create_time), also when they arrive out of order (#24 bug 7).
func TestMessagesOfAChatInOrder(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{Concurrent: true})
	bot, err := feishu.New(srv.BotConfig(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	// The product waits 100 ms for a burst's other frames; at load 30 a frame's goroutine
	// can start later than that (1 in 30 runs delivered "a" last), which is the window's
	// known limit, not what this test is about: the order within the window.
	feishu.SetOrderWindow(bot, 2*time.Second)
	box := newInbox()
	run(t, bot, box)
	eventually(t, srv.Connected)
	base := time.Now().Add(-time.Minute)
	const n = 8
	var want []string
	var msgs []feishutest.Message
	for i := range n {
		text := string(rune('a' + i))
		want = append(want, text)
		msgs = append(msgs, feishutest.Message{ChatID: "oc_fast", SenderID: "ou_alice", Text: text,
			Time: base.Add(time.Duration(i) * time.Millisecond)})
	}
	for i := n - 1; i >= 0; i-- { // the platform pushes them in the wrong order
		srv.Push(msgs[i])
	}
	var got []string
	for range n {
		got = append(got, box.next(t).Text)
	}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %q, want %q (the order they were sent)", got, want)
	}
}
