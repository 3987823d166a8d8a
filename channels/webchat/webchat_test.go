package webchat

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
)

func TestPostDeliversTheOwnersMessage(t *testing.T) {
	c := New(Config{MaxText: 10})
	if err := c.Post(context.Background(), Message{Text: "hi"}); !errors.Is(err, ErrNotRunning) {
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
	for errors.Is(c.Post(ctx, Message{Text: " "}), ErrNotRunning) {
		if time.Now().After(deadline) {
			t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
	for _, tt := range []struct {
		text string
		want error
	}{{"", ErrEmpty}, {" \n", ErrEmpty}, {"\x00", ErrEmpty}, {strings.Repeat("a", 11), ErrTooLong}} {
		if err := c.Post(ctx, Message{Text: tt.text}); !errors.Is(err, tt.want) {
			t.Errorf("Post(%q) = %v, want %v", tt.text, err, tt.want)
		}
	}
	if err := c.Post(ctx, Message{Chat: "Owner/../x", Text: "hi"}); !errors.Is(err, ErrBadChat) {
		t.Errorf("a bad chat id: %v", err)
	}
	if err := c.Post(ctx, Message{Text: "a\x00b\xff"}); err != nil {
		t.Fatal(err)
	}
	in := <-got
	if in.Text != "ab\uFFFD" || in.ChatID != ChatID || in.SenderID != SenderID || in.ChatType != messages.ChatDirect || in.MessageID == "" {
		t.Errorf("delivered %+v", in)
	}
	second := NewChat()
	if err := c.Post(ctx, Message{Chat: second, Text: "two"}); err != nil {
		t.Fatal(err)
	}
	if in := <-got; in.ChatID != second || in.SenderID != second { // its own session (the sender is the peer)
		t.Errorf("second chat delivered %+v", in)
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
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", ChatID: "c1", Kind: messages.TurnStarted})
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", ChatID: "c1", Kind: messages.ToolStarted, Label: "ls"})
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", Kind: messages.ToolFinished})
	c.Progress(context.Background(), messages.TurnEvent{SessionKey: "k", Kind: messages.TextDelta, Text: "x"})
	for range 200 {
		if _, err := c.Send(context.Background(), messages.Outbound{SessionKey: "k", ChatID: "c1", Text: "done"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []Event{{Kind: EventStarted, Session: "k", Chat: "c1"}, {Kind: EventProgress, Text: "ls", Session: "k", Chat: "c1"},
		{Kind: EventReply, Text: "done", Session: "k", Chat: "c1"}}
	for _, w := range want {
		if got := <-ch; got != w {
			t.Errorf("got %+v, want %+v", got, w)
		}
	}
	if c.SessionKey("c1") != "k" || c.SessionKey("owner") != "" {
		t.Errorf("session keys %q %q", c.SessionKey("c1"), c.SessionKey("owner"))
	}
	stop()
	stop()
	for range ch { // closed after the buffered events
	}
}

func TestUploadKeepsAFileForFetch(t *testing.T) {
	dir := t.TempDir()
	c := New(Config{UploadDir: dir, MaxFile: func(k messages.MediaKind) int64 {
		if k == messages.MediaImage {
			return 8
		}
		return 100
	}})
	m, err := c.Upload(`..\evil/"x.png`, "image/png", strings.NewReader("PNGDATA"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != messages.MediaImage || m.Name != "x.png" || m.Size != 7 || m.MIME != "image/png" || !m.Pending() {
		t.Errorf("media %+v", m)
	}
	rc, err := c.Fetch(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "PNGDATA" {
		t.Errorf("fetched %q", b)
	}
	if _, err := c.Upload("big.png", "image/png", strings.NewReader("123456789")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 9-byte image over the 8-byte limit: %v", err)
	}
	if m, err := c.Upload("notes.txt", "", strings.NewReader("123456789")); err != nil || m.Kind != messages.MediaDocument || m.MIME != "text/plain" {
		t.Errorf("a text file: %+v, %v", m, err)
	}
	if _, err := c.Upload("empty.txt", "text/plain", strings.NewReader("")); !errors.Is(err, ErrEmpty) {
		t.Errorf("an empty file: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files kept, want 2 (refused ones removed)", len(ents))
	}
	for _, ref := range []string{"webchat-upload:../../etc/passwd", "webchat-upload:" + strings.Repeat("g", 32), "file:///etc/passwd"} {
		if _, err := c.Fetch(context.Background(), messages.Media{Ref: ref}); err == nil {
			t.Errorf("Fetch(%q) opened something", ref)
		}
	}
	if _, err := New(Config{}).Upload("a.png", "image/png", strings.NewReader("x")); !errors.Is(err, ErrNoUploads) {
		t.Errorf("uploads without a directory: %v", err)
	}
}
