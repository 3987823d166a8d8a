package webchat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
)

func TestPostDeliversTheOwnersMessage(t *testing.T) {
	c := New(Config{MaxText: 10})
	if err := c.Post(context.Background(), "hi"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("post before Run: %v", err)
	}
	got := make(chan messages.Inbound, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, func(_ context.Context, in messages.Inbound) error { got <- in; return nil })
	}()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(20 * time.Second)
	for errors.Is(c.Post(ctx, " "), ErrNotRunning) {
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
	for _, tt := range []struct {
		text string
		want error
	}{{"", ErrEmpty}, {" \n", ErrEmpty}, {"\x00", ErrEmpty}, {strings.Repeat("a", 11), ErrTooLong}} {
		if err := c.Post(ctx, tt.text); !errors.Is(err, tt.want) {
			t.Errorf("Post(%q) = %v, want %v", tt.text, err, tt.want)
		}
	}
	if err := c.Post(ctx, "a\x00b\xff"); err != nil {
		t.Fatal(err)
	}
	in := <-got
	if in.Text != "ab\uFFFD" || in.ChatID != ChatID || in.SenderID != SenderID || in.ChatType != messages.ChatDirect || in.MessageID == "" {
		t.Errorf("delivered %+v", in)
	}
	if len(got) != 0 {
		t.Errorf("refused messages were delivered: %d", len(got))
	}
}

func TestWatchersGetRepliesAndProgress(t *testing.T) {
	c := New(Config{})
	ch, stop := c.Subscribe()
	slow, stopSlow := c.Subscribe() // never read: must not block anyone
	defer stopSlow()
	_ = slow
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", Kind: messages.TurnStarted})
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", Kind: messages.ToolStarted, Label: "ls"})
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", Kind: messages.ToolFinished})
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", Kind: messages.TextDelta, Text: "x"})
	for range 200 {
		if _, err := c.Send(context.Background(), messages.Outbound{SessionKey: "k", Text: "done"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []Event{{Kind: EventStarted, Session: "k"}, {Kind: EventProgress, Text: "ls", Session: "k"}, {Kind: EventReply, Text: "done", Session: "k"}}
	for _, w := range want {
		if got := <-ch; got != w {
			t.Errorf("got %+v, want %+v", got, w)
		}
	}
	if c.SessionKey() != "k" {
		t.Errorf("session key %q", c.SessionKey())
	}
	stop()
	stop()
	for range ch { // closed after the buffered events
	}
}
