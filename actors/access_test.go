package actors_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

func (h *harness) inject(in messages.Inbound) {
	h.t.Helper()
	if err := h.ch.Inject(context.Background(), in); err != nil {
		h.t.Fatal(err)
	}
}

// noReply asserts that nothing was sent, after a message that should be ignored went all the
// way through the connector (Inject returns once the connector has decided).
func (h *harness) noReply() {
	h.t.Helper()
	select {
	case out := <-h.ch.Sent:
		h.t.Fatalf("unexpected reply: %+v", out)
	default:
	}
}

func TestPairing(t *testing.T) {
	script := fakellm.NewScript(fakellm.Reply{Text: "welcome"})
	h := newHarness(t, harnessOpts{script: script, access: &access.Rules{DMPolicy: "pairing"}})

	h.inject(messages.Inbound{ChatID: "u1", SenderID: "u1", Text: "hello?"})
	notice := h.reply()
	code := codeIn(t, notice.Text)
	h.inject(messages.Inbound{ChatID: "u1", SenderID: "u1", Text: "hello again?"})
	h.noReply() // one code per pending request, no second notice
	if n := len(script.Requests()); n != 0 || h.rt.LiveSessions() != 0 {
		t.Fatalf("an unknown sender reached the model (%d calls) or made a session (%d live)", n, h.rt.LiveSessions())
	}

	for _, who := range []string{"u2", "u3", "u4"} {
		h.inject(messages.Inbound{ChatID: who, SenderID: who, Text: "hi"})
	}
	for range 3 {
		codeIn(t, h.reply().Text) // u4 too: a few pending requests lock nobody out (issue #20, finding 6)
	}

	// A queue full of fresh requests: the next sender is told to try later, not left in silence.
	if err := h.rt.Write(context.Background(), func(tx persistence.Tx) error {
		for i := range access.MaxPendingPairing {
			who := fmt.Sprintf("spam%d", i)
			if _, _, err := access.RequestPairing(tx, "fake", &messages.Inbound{SenderID: who, ChatID: who}, time.Now()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.inject(messages.Inbound{ChatID: "late", SenderID: "late", Text: "hi"})
	if got := h.reply(); got.ChatID != "late" || got.Text != access.PairingBusyNotice {
		t.Fatalf("a sender refused by a full queue got %+v, want the busy notice", got)
	}

	if err := h.rt.Write(context.Background(), func(tx persistence.Tx) error {
		_, err := access.ApprovePairing(tx, "fake", code, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h.inject(messages.Inbound{ChatID: "u1", SenderID: "u1", Text: "am I in?"})
	if got := h.reply(); got.ChatID != "u1" || got.Text != "welcome" {
		t.Fatalf("after approval got %+v", got)
	}
	err := h.rt.Write(context.Background(), func(tx persistence.Tx) error {
		_, err := access.ApprovePairing(tx, "fake", code, time.Now())
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "no pending pairing") {
		t.Errorf("approving a used code: %v", err)
	}
}

func codeIn(t *testing.T, text string) string {
	t.Helper()
	i := strings.Index(text, "reef pairing approve fake ")
	if i < 0 {
		t.Fatalf("no pairing code in %q", text)
	}
	return strings.Fields(text[i+len("reef pairing approve fake "):])[0]
}

func TestGroupsAndAllowlist(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "answer"} }
	h := newHarness(t, harnessOpts{script: script, access: &access.Rules{DMPolicy: "allowlist",
		AllowFrom: []string{"friend"}, Groups: []string{"team"}, RequireMention: true}})

	h.inject(messages.Inbound{ChatID: "stranger", SenderID: "stranger", Text: "hi"})
	h.inject(messages.Inbound{ChatID: "other-group", ChatType: messages.ChatGroup, SenderID: "friend", Text: "@bot hi", Mentioned: true})
	h.inject(messages.Inbound{ChatID: "team", ChatType: messages.ChatGroup, SenderID: "anyone", Text: "chatting among us"})
	h.noReply()
	if n := len(script.Requests()); n != 0 {
		t.Fatalf("%d model calls for refused messages", n)
	}
	h.inject(messages.Inbound{ChatID: "team", ChatType: messages.ChatGroup, SenderID: "anyone", Text: "@bot help", Mentioned: true})
	if got := h.reply(); got.ChatID != "team" {
		t.Fatalf("mention in an allowed group: got %+v", got)
	}
	h.inject(messages.Inbound{ChatID: "friend", SenderID: "friend", Text: "hi"})
	if got := h.reply(); got.ChatID != "friend" {
		t.Fatalf("allowlisted DM: got %+v", got)
	}
}
