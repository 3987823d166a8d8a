package actors_test

import (
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence/memory"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/message"
)

// The rig of the tests that run one agent on one platform's wire fake (media both ways, reply
// directives, the message tool's edits): a bot on the fake, what the fake was sent, and a
// tree with that agent and channel on an in-memory store.

// telegramBot returns a Telegram bot on the wire fake srv.
func telegramBot(t testing.TB, srv *telegramtest.Server) *telegram.Bot {
	t.Helper()
	bot, err := telegram.New(telegram.Config{Token: telegramtest.Token, APIRoot: srv.URL, PollTimeout: time.Second}, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return bot
}

// sentTo returns a channel that receives every message srv is sent (buffered: n).
func sentTo(srv *telegramtest.Server, n int) <-chan telegramtest.SentMessage {
	sent := make(chan telegramtest.SentMessage, n)
	srv.OnSend(func(m telegramtest.SentMessage) { sent <- m })
	return sent
}

// nextAnswer returns the next message sent that is not the draft "…".
func nextAnswer(t testing.TB, sent <-chan telegramtest.SentMessage) telegramtest.SentMessage {
	t.Helper()
	for {
		if m := testutil.Receive(t, sent); m.Text != "…" {
			return m
		}
	}
}

// messageTools returns a registry of the message tool alone and a policy allowing it.
func messageTools(t testing.TB) (*tools.Registry, tools.Policy) {
	t.Helper()
	reg, err := tools.NewRegistry(message.New())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := tools.NewPolicy(nil, nil, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	return reg, policy
}

// startAgent runs ag alone on ch (named name) with an in-memory store until the test ends;
// hook, when set, changes the Deps first.
func startAgent(t testing.TB, ag *actors.Agent, name string, ch channels.Channel, hook func(*actors.Deps)) {
	t.Helper()
	deps := &actors.Deps{Log: testutil.Logger(t), Store: memory.New(), Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{name: ch}}
	if hook != nil {
		hook(deps)
	}
	rt, err := actors.Start(deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(10 * time.Second) })
}
