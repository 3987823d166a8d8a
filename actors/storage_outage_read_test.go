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
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// TestRecoveryWaitsOutADatabaseOutage: the tree starts (as after a Router restart) while
// its database is unreachable, with a message accepted earlier still in a session's inbox.
// The reads that find the pending sessions and load them wait for the database instead of
// going on as if the store were empty: once it is back the message is answered, once.
func TestRecoveryWaitsOutADatabaseOutage(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	store, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const key = "agent:main:fake:direct:42"
	if err := store.Update(func(tx persistence.Tx) error {
		_, err := tx.AppendInbox(key, messages.Inbound{Channel: "fake", ChatID: "42", SenderID: "42", MessageID: "m1",
			SessionKey: key, Text: "accepted before the outage", Time: time.Now()})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	script := fakellm.NewScript(fakellm.Reply{Text: "answered after the outage"})
	reg, err := tools.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := tools.NewPolicy(nil, nil, reg.Names())
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: fakellm.New(script), Tools: reg, Policy: policy, ContextWindow: 128000, Location: time.UTC}
	ch := fake.New()
	deps := &actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"fake": ch},
		Access:   map[string]*access.Rules{"fake": {DMPolicy: "allowlist", AllowFrom: []string{"42"}}}}

	proxy.Cut()
	rt, err := actors.Start(deps)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(10 * time.Second)
	time.Sleep(time.Second) // the tree starts and reads while the database is away
	select {
	case out := <-ch.Sent:
		t.Fatalf("sent %q while the database was unreachable", out.Text)
	default:
	}
	proxy.Restore()
	select {
	case out := <-ch.Sent:
		if !strings.Contains(out.Text, "answered after the outage") {
			t.Errorf("reply %q", out.Text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the message accepted before the outage was not answered after it")
	}
	select {
	case out := <-ch.Sent:
		t.Errorf("a second reply %q", out.Text)
	case <-time.After(500 * time.Millisecond):
	}
}
