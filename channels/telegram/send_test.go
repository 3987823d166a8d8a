package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

func TestSendRendersRepliesAndThreads(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	ids, err := b.Send(context.Background(), messages.Outbound{
		ChatID: "-100", ThreadID: "77", ReplyToID: "-100:12", Text: "**Done**: `x < y`",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Messages(-100)
	if len(got) != 1 || len(ids) != 1 {
		t.Fatalf("sent %d messages, ids %v; want 1", len(got), ids)
	}
	m := got[0]
	if m.Raw != "<b>Done</b>: <code>x &lt; y</code>" || m.ParseMode != "HTML" || m.Text != "Done: x < y" {
		t.Errorf("sent %q (%s), shown %q; want rendered HTML", m.Raw, m.ParseMode, m.Text)
	}
	if m.ReplyTo != 12 || m.ThreadID != 77 {
		t.Errorf("reply to %d in thread %d, want 12 in 77", m.ReplyTo, m.ThreadID)
	}
	if want := "-100:" + strconv.Itoa(m.MessageID); ids[0] != want {
		t.Errorf("id = %q, want %q", ids[0], want)
	}
}

func TestSendLongReplyRepliesWithFirstChunkOnly(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	text := strings.Repeat("👍🏽 & <ok> ", 2000)
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "5", ReplyToID: "5:3", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Messages(5)
	if len(got) < 3 || len(ids) != len(got) {
		t.Fatalf("%d messages, %d ids; want at least 3 and one id each", len(got), len(ids))
	}
	var shown strings.Builder
	for i, m := range got {
		if (i == 0) != (m.ReplyTo == 3) {
			t.Errorf("message %d replies to %d; only the first should reply", i, m.ReplyTo)
		}
		if n := channels.UTF16(m.Text); n > MaxMessage {
			t.Errorf("message %d measures %d UTF-16 units", i, n)
		}
		shown.WriteString(m.Text)
	}
	if strings.Join(strings.Fields(shown.String()), " ") != strings.TrimSpace(text) {
		t.Error("the chunks do not add up to the reply")
	}
}

func TestSendFallsBackToPlainTextOnParseError(t *testing.T) {
	s := telegramtest.New(t)
	b, logs := newTestBot(t, s, nil)
	s.FailNextWith("sendMessage", 400, `Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 3`, 0)
	if _, err := b.Send(context.Background(), messages.Outbound{ChatID: "5", Text: "**hi** <x>"}); err != nil {
		t.Fatal(err)
	}
	got := s.Messages(5)
	if len(got) != 1 || got[0].ParseMode != "" || got[0].Raw != "hi <x>" {
		t.Fatalf("sent %+v, want the text as it would have shown, once, without parse mode", got)
	}
	if !contains(logs.String(), "plain text") {
		t.Errorf("no log line about the plain-text fallback: %s", logs)
	}
}

func TestSendWaitsRetryAfter(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	s.FailNext("sendMessage", 429, 1)
	start := time.Now()
	if _, err := b.Send(context.Background(), messages.Outbound{ChatID: "5", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("sent again after %v, want retry_after (1s) honoured", waited)
	}
	if n := s.Calls("sendMessage"); n != 2 || len(s.Sent(5)) != 1 {
		t.Errorf("%d calls, %d messages; want 2 calls and 1 message", n, len(s.Sent(5)))
	}

	s.FailNext("sendMessage", 429, 60)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err := b.Send(ctx, messages.Outbound{ChatID: "5", Text: "hi"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("Send during a long retry_after with a short ctx = %v after %v, want the ctx error promptly", err, time.Since(start))
	}
}

func TestSendPermanentFailures(t *testing.T) {
	tests := []struct {
		name      string
		code      int
		desc      string
		permanent bool
		auth      bool
	}{
		{"blocked", 403, "Forbidden: bot was blocked by the user", true, false},
		{"kicked", 403, "Forbidden: bot was kicked from the group chat", true, false},
		{"chat not found", 400, "Bad Request: chat not found", true, false},
		{"server error", 500, "Internal Server Error", false, false},
		{"bad gateway", 502, "Bad Gateway", false, false},
		{"token revoked", 401, "Unauthorized", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := telegramtest.New(t)
			b, _ := newTestBot(t, s, nil)
			s.FailNextWith("sendMessage", tt.code, tt.desc, 0)
			_, err := b.Send(context.Background(), messages.Outbound{ChatID: "5", Text: "hi"})
			if err == nil {
				t.Fatal("Send succeeded, want an error")
			}
			if errors.Is(err, channels.ErrPermanent) != tt.permanent || errors.Is(err, channels.ErrAuth) != tt.auth {
				t.Errorf("err = %v: permanent %v, auth %v; want %v, %v", err, errors.Is(err, channels.ErrPermanent), errors.Is(err, channels.ErrAuth), tt.permanent, tt.auth)
			}
			if !strings.HasPrefix(err.Error(), "telegram: ") {
				t.Errorf("err = %q, want the telegram: prefix", err)
			}
			if n := s.Calls("sendMessage"); n != 1 {
				t.Errorf("%d calls, want 1 (no retry inside Send)", n)
			}
		})
	}
}

// TestSendRetryContinues checks that a Send the connector retries after a failure in the
// middle of a multi-chunk reply sends only the chunks still missing.
func TestSendRetryContinues(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	out := messages.Outbound{ChatID: "5", Text: strings.Repeat("word ", 3000), SessionKey: "k", OutboxSeq: 9}
	want := len(Chunks(out.Text))
	if want < 3 {
		t.Fatalf("%d chunks; the test needs at least 3", want)
	}
	s.FailAfter("sendMessage", 1, 500, 0)
	if _, err := b.Send(context.Background(), out); err == nil || errors.Is(err, channels.ErrPermanent) {
		t.Fatalf("first Send = %v, want a transient error", err)
	}
	ids, err := b.Send(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Sent(5)); got != want || len(ids) != want {
		t.Errorf("%d messages sent, %d ids; want each of the %d chunks once", got, len(ids), want)
	}
}

func TestTypingAndEdit(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	ctx := context.Background()
	if err := b.Typing(ctx, "5"); err != nil {
		t.Fatal(err)
	}
	if got := s.Actions(5); len(got) != 1 || got[0] != "typing" {
		t.Errorf("chat actions = %v, want [typing]", got)
	}
	ids, err := b.Send(ctx, messages.Outbound{ChatID: "5", Text: "working…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Edit(ctx, "5", ids[0], "**done**"); err != nil {
		t.Fatal(err)
	}
	if err := b.Edit(ctx, "5", ids[0], "**done**"); err != nil {
		t.Errorf("Edit with unchanged text = %v, want nil", err)
	}
	m := s.Messages(5)[0]
	if m.Text != "done" || m.Raw != "<b>done</b>" || m.Edits != 1 {
		t.Errorf("edited message = %+v, want rendered text, one edit", m)
	}
	if err := b.Edit(ctx, "5", "5:999", "x"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("Edit of a missing message = %v, want ErrPermanent", err)
	}
	if ids, err := b.Send(ctx, messages.Outbound{ChatID: "5", Text: "```\n```\n\n> "}); err != nil || len(ids) != 0 {
		t.Errorf("Send of a reply that shows nothing = %v, %v; want nothing sent, no error", ids, err)
	}
	if _, err := b.Send(ctx, messages.Outbound{ChatID: "not-a-chat", Text: "x"}); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("Send to a malformed chat id = %v, want ErrPermanent", err)
	}
}

// TestSendCapsChunks: a reply that would take more than Outbound.MaxChunks messages sends
// MaxChunks, the last one a note that the rest was left out (#20 finding 8).
func TestSendCapsChunks(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	text := strings.Repeat("a long line of the answer\n", 10000) // about 260,000 characters: 60+ chunks
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "5", Text: text, MaxChunks: 4})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Messages(5)
	if len(got) != 4 || len(ids) != 4 {
		t.Fatalf("%d messages, %d ids; want 4", len(got), len(ids))
	}
	if last := got[3].Text; !strings.Contains(last, "too long to send in full") {
		t.Errorf("last message = %q, want the note that the rest was left out", last)
	}
	if _, err := b.Send(context.Background(), messages.Outbound{ChatID: "6", Text: text}); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Messages(6)); n != channels.DefaultMaxChunks {
		t.Errorf("with no MaxChunks: %d messages, want the default %d", n, channels.DefaultMaxChunks)
	}
}

func TestReact(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	if err := b.React(context.Background(), "5", "5:17", "👍"); err != nil {
		t.Fatal(err)
	}
	if err := b.React(context.Background(), "5", "17", ""); err != nil {
		t.Fatal(err)
	}
	want := []telegramtest.Reaction{{MessageID: 17, Emoji: "👍"}, {MessageID: 17}}
	if got := s.Reactions(5); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("reactions %+v, want %+v", got, want)
	}
	if err := b.React(context.Background(), "5", "nope", "👍"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("a bad message id: err %v, want permanent", err)
	}
}
