package actors_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/sessionkey"
)

const rateNotice = "You're sending messages faster than I can take them; I skipped some. Please wait a moment."

// accepted counts the messages a session accepted: user entries in its transcript plus
// inbox entries not yet answered (a run moves them from one to the other in one transaction).
func accepted(t *testing.T, h *harness, key string) int {
	t.Helper()
	n := 0
	if err := h.store.View(func(r persistence.Reader) error {
		inbox, err := r.Inbox(key)
		if err != nil {
			return err
		}
		entries, err := r.Messages(key, 0)
		for _, e := range entries {
			if e.Role == messages.RoleUser {
				n++
			}
		}
		n += len(inbox)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// untilFinal reads the chat's replies until the answer to the "FINAL" message and returns
// how many rate-limit notices came before it. Replies of one chat are sent in order, so
// every notice of the chat's earlier floods has arrived by then.
func untilFinal(t *testing.T, h *harness, chat string) (notices int) {
	t.Helper()
	for {
		out := h.reply()
		if out.ChatID != chat {
			continue
		}
		switch out.Text {
		case rateNotice:
			notices++
		case "done":
			return notices
		}
	}
}

func finalScript() *fakellm.Script {
	s := fakellm.NewScript()
	s.Respond = func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "FINAL") {
			return fakellm.Reply{Text: "done"}
		}
		return fakellm.Reply{Text: "ok"}
	}
	return s
}

// TestRateLimitFlood: a sender flooding a chat gets at most the bucket through (and what it
// earns back over time), the rest is dropped with exactly one notice per minute, and another
// sender talking at the same time is not affected.
func TestRateLimitFlood(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	h := newHarness(t, harnessOpts{script: finalScript(), now: clock.Now,
		session: actors.SessionSettings{RateLimit: actors.RateLimit{Messages: 5, Per: time.Minute}}})
	flood := func(chat string, n int) {
		for i := range n {
			h.say(chat, fmt.Sprintf("%s message %d", chat, i))
		}
	}

	flood("a", 20) // 5 through, one notice
	flood("b", 4)  // another sender: all through
	if got := accepted(t, h, h.key("a")); got != 5 {
		t.Errorf("flooding sender: %d of 20 accepted, want the bucket of 5", got)
	}
	if got := accepted(t, h, h.key("b")); got != 4 {
		t.Errorf("other sender: %d of 4 accepted, want all", got)
	}
	clock.Advance(30 * time.Second) // earns 2.5 back; still inside the notice minute
	flood("a", 10)
	if got := accepted(t, h, h.key("a")); got != 5+2 {
		t.Errorf("after 30 s: %d accepted in all, want 7", got)
	}
	clock.Advance(31 * time.Second) // 0.5 + 2.58 earned; the notice minute is over
	flood("a", 10)
	if got := accepted(t, h, h.key("a")); got != 7+3 {
		t.Errorf("after 61 s: %d accepted in all, want 10", got)
	}
	clock.Advance(time.Minute)
	h.say("a", "FINAL")
	if n := untilFinal(t, h, "a"); n != 2 {
		t.Errorf("%d notices in the flooded chat, want 2 (one per minute of flooding)", n)
	}
	h.say("b", "FINAL")
	if n := untilFinal(t, h, "b"); n != 0 {
		t.Errorf("%d notices to the other sender, want none", n)
	}
}

// TestRateLimitRedelivery: a redelivered message is a duplicate, not a new one: it costs no
// token. A dropped message is marked seen, so its redelivery is dropped too, without a notice.
func TestRateLimitRedelivery(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	h := newHarness(t, harnessOpts{script: finalScript(), now: clock.Now,
		session: actors.SessionSettings{RateLimit: actors.RateLimit{Messages: 2, Per: time.Hour}}})
	inject := func(id, text string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
		defer cancel()
		if err := h.ch.Inject(ctx, messages.Inbound{ChatID: "a", MessageID: id, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		inject("m1", "first")
	}
	inject("m2", "second") // the second token: m1's redeliveries cost none
	inject("m3", "third")  // dropped, one notice
	inject("m3", "third")  // a redelivery of a dropped message: dropped, no second notice
	if got := accepted(t, h, h.key("a")); got != 2 {
		t.Errorf("%d accepted, want 2 (m1 once, m2)", got)
	}
	clock.Advance(2 * time.Hour)
	inject("m4", "FINAL")
	if n := untilFinal(t, h, "a"); n != 1 {
		t.Errorf("%d notices, want 1", n)
	}
}

// TestRateLimitTerminalExempt: the terminal is the operator at the keyboard; no limit applies.
func TestRateLimitTerminalExempt(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	h := newHarness(t, harnessOpts{script: finalScript(), now: clock.Now, channel: "terminal",
		session: actors.SessionSettings{RateLimit: actors.RateLimit{Messages: 2, Per: time.Minute}}})
	for i := range 10 {
		h.say("local", fmt.Sprintf("line %d", i))
	}
	key := sessionkey.For("main", "", &messages.Inbound{Channel: "terminal", ChatID: "local", SenderID: "local", ChatType: messages.ChatDirect})
	if got := accepted(t, h, key); got != 10 {
		t.Errorf("%d of 10 terminal lines accepted, want all", got)
	}
	h.say("local", "FINAL")
	if n := untilFinal(t, h, "local"); n != 0 {
		t.Errorf("%d notices on the terminal, want none", n)
	}
}
