package actors_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/postgres"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
)

// pgNode is one node of a two- or three-node cluster in one process: its own actor system,
// connection pool (with notifications, heard by its Router as in cmd/reef), fake channel and
// model, on the test's PostgreSQL schema and a shared workspace. Which sessions it runs is
// set by the test (own).
type pgNode struct {
	name   string
	rt     *actors.Runtime
	store  *postgres.Store
	ch     *fake.Channel
	script *fakellm.Script
	own    *switchOwnership
	seen   []messages.Outbound // sent and not yet matched by sentTo
}

// pgNodeOpts are what the nodes of a test share.
type pgNodeOpts struct {
	url, workspace string
	respond        func(fakellm.Request) fakellm.Reply
	access         *access.Rules
	guests         *tools.GuestRules
	approvals      actors.ApprovalSettings
	extra          []tools.Tool
	platform       *fake.Editable // one platform every node's Connector speaks to; nil: a plain fake per node
}

func startPGNode(t *testing.T, name string, o pgNodeOpts) *pgNode {
	t.Helper()
	store, err := postgres.Open(context.Background(), o.url, postgres.Options{MaxConns: 6, Notify: true})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(append([]tools.Tool{exec.New(exec.Config{})}, o.extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := tools.NewPolicy(nil, nil, reg.Names())
	guests := tools.GuestRules{Channel: tools.Grant{Allow: []string{tools.All}}}
	if o.guests != nil {
		guests = *o.guests
	}
	grants, err := tools.NewGuestPolicy(guests, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	script := fakellm.NewScript()
	script.Respond = o.respond
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: o.workspace, Model: "fake/test-model",
		Provider: fakellm.New(script), Tools: reg, Policy: policy, ContextWindow: 128000}
	ch, own := fake.New(), &switchOwnership{}
	var platform channels.Channel = ch
	if o.platform != nil {
		ch, platform = o.platform.Channel, o.platform
	}
	deps := &actors.Deps{Log: testutil.Logger(t).With().Str("node", name).Logger(), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"fake": platform}, ToolGrants: map[string]*tools.GuestPolicy{"fake": grants},
		Approvals: o.approvals, Streaming: plainDrafts("fake"), Cluster: own}
	if o.access != nil {
		deps.Access = map[string]*access.Rules{"fake": o.access}
	}
	rt, err := actors.Start(deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		_ = store.Listen(ctx, rt.InboxNotified)
	}()
	n := &pgNode{name: name, rt: rt, store: store, ch: ch, script: script, own: own}
	t.Cleanup(func() {
		cancel()
		<-listening
		if err := rt.Stop(10 * time.Second); err != nil {
			t.Error(err)
		}
		store.Close()
	})
	return n
}

// owns gives the node the sessions of chats (fake channel, direct unless a group's "ops").
func (n *pgNode) owns(chats ...string) {
	for _, chat := range chats {
		n.own.set(chatKey(chat), true)
	}
	n.rt.PartitionsChanged()
}

func chatKey(chat string) string {
	in := messages.Inbound{Channel: "fake", ChatType: messages.ChatDirect, SenderID: chat, ChatID: chat}
	if chat == "ops" {
		in = messages.Inbound{Channel: "fake", ChatType: messages.ChatGroup, ChatID: chat}
	}
	return sessionkey.For("main", "", &in)
}

func (n *pgNode) inject(t *testing.T, in messages.Inbound) {
	t.Helper()
	if err := n.ch.Inject(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

// sentTo waits for a message the node's channel sent to chat containing want.
func (n *pgNode) sentTo(t *testing.T, chat, want string) messages.Outbound {
	t.Helper()
	match := func(out messages.Outbound) bool { return out.ChatID == chat && strings.Contains(out.Text, want) }
	for i, out := range n.seen {
		if match(out) {
			n.seen = append(n.seen[:i:i], n.seen[i+1:]...)
			return out
		}
	}
	deadline := time.After(testutil.Timeout)
	for {
		select {
		case out := <-n.ch.Sent:
			if match(out) {
				return out
			}
			n.seen = append(n.seen, out)
		case <-deadline:
			t.Fatalf("%s sent nothing containing %q to %s (sent meanwhile: %+v)", n.name, want, chat, n.seen)
		}
	}
}
