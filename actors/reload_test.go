package actors_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// A reload adds a channel account (its Connector answers), changes the agent's model (the
// next run uses it), swaps an account's access rules, and removes an account while another
// conversation goes on: no Session is stopped.
func TestReloadChannelsAgentsAccess(t *testing.T) {
	h := newHarness(t, harnessOpts{script: fakellm.NewScript(fakellm.Reply{Text: "first model"})})
	h.say("1", "hello")
	if got := h.reply().Text; got != "first model" {
		t.Fatalf("reply %q", got)
	}

	// Add the account fake:two and change the agent's model.
	two := fake.New()
	next := h.rt.Settings()
	next.Channels = maps.Clone(next.Channels)
	next.Channels["fake:two"] = two
	agent := &actors.Agent{ID: h.agent.ID, Name: h.agent.Name, Workspace: h.agent.Workspace, Tools: h.agent.Tools,
		Policy: h.agent.Policy, ContextWindow: h.agent.ContextWindow, Model: "fake/second"}
	agent.Provider = fakellm.New(fakellm.NewScript(fakellm.Reply{Text: "second model"}, fakellm.Reply{Text: "second again"},
		fakellm.Reply{Text: "after removal"}))
	next.Agents = []*actors.Agent{agent}
	if err := h.rt.Reload(next); err != nil {
		t.Fatal(err)
	}
	inject(t, two, messages.Inbound{ChatID: "7", SenderID: "7", Text: "hi two"})
	if got := testutil.Receive(t, two.Sent); got.Text != "second model" || got.Channel != "fake" || got.Account != "two" {
		t.Fatalf("the new account got %+v", got)
	}
	h.say("1", "again") // the running session takes the new model at its next run
	if got := h.reply().Text; got != "second again" {
		t.Fatalf("the old account's session after the reload: %q", got)
	}

	// Access: fake:two now pairs unknown senders.
	next = h.rt.Settings()
	next.Access = maps.Clone(next.Access)
	next.Access["fake:two"] = &access.Rules{DMPolicy: "pairing", AllowFrom: []string{"9"}}
	if err := h.rt.Reload(next); err != nil {
		t.Fatal(err)
	}
	inject(t, two, messages.Inbound{ChatID: "8", SenderID: "8", Text: "who am I"})
	if got := testutil.Receive(t, two.Sent); !strings.Contains(got.Text, "pairing") && !strings.Contains(got.Text, "reef pairing approve") {
		t.Fatalf("an unknown sender after the reload got %q, want a pairing code", got.Text)
	}

	// Remove the first account: the second goes on answering.
	next = h.rt.Settings()
	next.Channels = map[string]channels.Channel{"fake:two": two}
	if err := h.rt.Reload(next); err != nil {
		t.Fatal(err)
	}
	inject(t, two, messages.Inbound{ChatID: "9", SenderID: "9", Text: "still there?"})
	if got := testutil.Receive(t, two.Sent); got.Text != "after removal" {
		t.Fatalf("after removing fake: %q", got.Text)
	}
	for _, hl := range h.rt.Health() {
		if hl.Name == "fake" {
			t.Fatalf("the removed account still has a connector: %+v", hl)
		}
	}
}

func inject(t *testing.T, ch *fake.Channel, in messages.Inbound) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	if err := ch.Inject(ctx, in); err != nil {
		t.Fatal(err)
	}
}
