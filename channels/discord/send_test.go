package discord_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

// fencesBalanced reports whether every ``` fence opened in s is closed in s.
func fencesBalanced(s string) bool {
	open := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			open = !open
		}
	}
	return !open
}

func TestSendChunksWithBalancedFencesAndReply(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	bot := r.bot
	asked := srv.GuildMessage(t, "g1", "c1", "8", "show me code")
	r.next(t)
	text := "Here it is:\n\n```python\n" + strings.Repeat("print('héllo wörld 😀')\n", 200) + "```\n\nDone."
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "c1", ReplyToID: asked, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.SentMessages("c1")
	if len(sent) < 3 || len(ids) != len(sent) {
		t.Fatalf("%d messages sent, %d ids; want at least 3 chunks with one id each", len(sent), len(ids))
	}
	for i, m := range sent {
		if n := channels.Runes(m.Content); n > discord.MaxMessage {
			t.Errorf("chunk %d has %d characters, over %d", i, n, discord.MaxMessage)
		}
		if !fencesBalanced(m.Content) {
			t.Errorf("chunk %d leaves a code fence open:\n%s", i, m.Content)
		}
		if i > 0 && !strings.HasPrefix(m.Content, "```python\n") && strings.Contains(sent[i-1].Content, "```python") {
			t.Errorf("chunk %d does not reopen the python fence", i)
		}
		if wantReply := map[bool]string{true: asked, false: ""}[i == 0]; m.ReplyTo != wantReply {
			t.Errorf("chunk %d replies to %q, want %q", i, m.ReplyTo, wantReply)
		}
		if m.ID != ids[i] {
			t.Errorf("id %d = %s, want %s", i, ids[i], m.ID)
		}
	}
	if got := strings.Count(strings.Join(srv.Sent("c1"), ""), "print('héllo wörld 😀')"); got != 200 {
		t.Errorf("%d code lines arrived, want 200", got)
	}
}

func TestSendReplyToVanishedMessage(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	if _, err := bot.Send(context.Background(), messages.Outbound{ChatID: "c1", ReplyToID: "404404", Text: "still here"}); err != nil {
		t.Fatalf("reply to a deleted message: %v, want it sent as a plain message", err)
	}
	if got := srv.Sent("c1"); len(got) != 1 {
		t.Errorf("sent %q", got)
	}
}

func TestChunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want int // number of chunks; -1: any
	}{
		{"blank", "  \n", 0},
		{"short", "hi", 1},
		{"exactly the limit", strings.Repeat("é", 2000), 1},
		{"one over", strings.Repeat("é", 2001), 2},
		{"long word", strings.Repeat("a", 4500), 3},
		{"fence", "```\n" + strings.Repeat("x\n", 1500) + "```", 2},
		{"absurd fence info", "```" + strings.Repeat("i", 1500) + "\n" + strings.Repeat("x\n", 1000) + "```", -1},
	}
	for _, tt := range tests {
		got := discord.Chunks(tt.text)
		if tt.want >= 0 && len(got) != tt.want || tt.want < 0 && len(got) == 0 {
			t.Errorf("%s: %d chunks, want %d", tt.name, len(got), tt.want)
		}
		for i, c := range got {
			if n := channels.Runes(c); n > discord.MaxMessage || n == 0 {
				t.Errorf("%s: chunk %d has %d characters", tt.name, i, n)
			}
		}
	}
}

func FuzzChunks(f *testing.F) {
	f.Add("hello\n\n```go\nx := 1\n```\n", 700)
	f.Add("😀é\u0301", 900)
	f.Fuzz(func(t *testing.T, piece string, n int) {
		text := strings.Repeat(piece, max(1, min(n, 3000)%(6000/max(1, len(piece))+1)))
		chunks := discord.Chunks(text)
		for i, c := range chunks {
			if r := channels.Runes(c); r > discord.MaxMessage || r == 0 {
				t.Fatalf("chunk %d has %d characters", i, r)
			}
		}
		if !strings.Contains(text, "```") && strings.TrimSpace(text) != "" && strings.Join(chunks, "") != text {
			t.Fatal("chunks of fence-free text do not concatenate back to it")
		}
	})
}

func TestSendHonoursRateLimit(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	srv.FailNext(discordtest.RouteSend, http.StatusTooManyRequests, 300*time.Millisecond)
	start := time.Now()
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "c1", Text: "patience"})
	if err != nil || len(ids) != 1 {
		t.Fatalf("Send = %v, %v; want one message after the rate limit", ids, err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("retried after %v, want at least the 300ms Discord asked for", waited)
	}
	if got := srv.Sent("c1"); len(got) != 1 || got[0] != "patience" {
		t.Errorf("sent %q", got)
	}
}

func TestSendRateLimitBoundedByContext(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	srv.FailNext(discordtest.RouteSend, http.StatusTooManyRequests, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := bot.Send(ctx, messages.Outbound{ChatID: "c1", Text: "hello"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, channels.ErrPermanent) {
		t.Errorf("Send = %v, want the context's deadline, not a permanent failure", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Send took %v with a 300ms context", took)
	}
	// discordgo's limiter now holds the channel's bucket for an hour; the next send must still
	// end with its context.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	start = time.Now()
	if _, err := bot.Send(ctx2, messages.Outbound{ChatID: "c1", Text: "again"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Send = %v, want the context's deadline", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("second Send took %v with a 300ms context", took)
	}
}

func TestSendErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status              int
		permanent, authFail bool
	}{
		{http.StatusForbidden, true, false},
		{http.StatusNotFound, true, false},
		{http.StatusInternalServerError, false, false},
		{http.StatusUnauthorized, false, true},
	}
	for _, tt := range tests {
		srv := discordtest.New(t, discordtest.Config{})
		bot := newBot(t, srv)
		srv.FailNext(discordtest.RouteSend, tt.status, 0)
		srv.FailNext(discordtest.RouteSend, tt.status, 0) // discordgo retries some statuses once
		_, err := bot.Send(context.Background(), messages.Outbound{ChatID: "c1", Text: "hi"})
		if err == nil || !strings.HasPrefix(err.Error(), "discord: send: ") {
			t.Errorf("HTTP %d: Send = %v, want a discord: send: error", tt.status, err)
			continue
		}
		if got := errors.Is(err, channels.ErrPermanent); got != tt.permanent {
			t.Errorf("HTTP %d: permanent = %v, want %v (%v)", tt.status, got, tt.permanent, err)
		}
		if got := errors.Is(err, channels.ErrAuth); got != tt.authFail {
			t.Errorf("HTTP %d: auth = %v, want %v (%v)", tt.status, got, tt.authFail, err)
		}
	}
}

func TestTypingAndEdit(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	bot := newBot(t, srv)
	ctx := context.Background()
	if err := bot.Typing(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Typing("c1"); got != 1 {
		t.Errorf("typing started %d times, want 1", got)
	}
	ids, err := bot.Send(ctx, messages.Outbound{ChatID: "c1", Text: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.Edit(ctx, "c1", ids[0], "final answer"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Sent("c1"); len(got) != 1 || got[0] != "final answer" {
		t.Errorf("after the edit the channel shows %q, want the final answer", got)
	}
	if err := bot.Edit(ctx, "c1", "999", "x"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("editing an unknown message = %v, want ErrPermanent", err)
	}
}

// TestSendCapsChunks: a reply past Outbound.MaxChunks messages is cut to that many, the last
// one a note (#20 finding 8).
func TestSendCapsChunks(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	text := strings.Repeat("a long line of the answer\n", 2000) // about 52,000 characters: 27+ chunks
	ids, err := r.bot.Send(context.Background(), messages.Outbound{ChatID: "c1", Text: text, MaxChunks: 3})
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.SentMessages("c1")
	if len(sent) != 3 || len(ids) != 3 {
		t.Fatalf("%d messages sent, %d ids; want 3", len(sent), len(ids))
	}
	if !strings.Contains(sent[2].Content, "too long to send in full") {
		t.Errorf("last message = %q, want the note", sent[2].Content)
	}
}
