package actors_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
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
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/message"
	"github.com/reefgw/reef/tools/sessions"
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

// approvalCluster is two nodes with approvals in owner mode: node A runs group "ops", whose
// members may use exec, node B the owner's direct chat.
func approvalCluster(t *testing.T, more ...string) map[string]*pgNode {
	t.Helper()
	o := pgNodeOpts{url: pgtest.URL(t), workspace: t.TempDir(),
		access:    &access.Rules{DMPolicy: "open", AllowFrom: []string{"*", "owner"}, Groups: []string{"ops"}},
		guests:    &tools.GuestRules{Groups: map[string]tools.GroupGrant{"ops": {Grant: tools.Grant{Allow: []string{"exec"}}}}},
		approvals: actors.ApprovalSettings{Mode: access.ApprovalsOwner, Timeout: time.Hour},
		respond: func(req fakellm.Request) fakellm.Reply {
			last := req.Messages[len(req.Messages)-1]
			switch {
			case last.Role == messages.RoleTool:
				return fakellm.Reply{Text: "result: " + last.Content}
			case strings.Contains(last.Content, "please run it"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("c1", "exec", map[string]any{"command": "echo ran-on-approval"})}}
			}
			return fakellm.Reply{Text: "hello owner"}
		}}
	nodes := map[string]*pgNode{}
	for _, name := range append([]string{"a", "b"}, more...) {
		nodes[name] = startPGNode(t, name, o)
	}
	nodes["a"].owns("ops")
	nodes["b"].owns("owner")
	nodes["b"].inject(t, messages.Inbound{ChatID: "owner", SenderID: "owner", Text: "hi"}) // the owner's chat is known
	nodes["b"].sentTo(t, "owner", "hello owner")
	nodes["a"].inject(t, messages.Inbound{ChatID: "ops", ChatType: messages.ChatGroup, SenderID: "42", SenderName: "Ann",
		Mentioned: true, Text: "please run it"})
	return nodes
}

// requestOf waits for the approval request node n sent to the owner and returns its id.
func requestOf(t *testing.T, n *pgNode) string {
	t.Helper()
	m := requestID.FindStringSubmatch(n.sentTo(t, "owner", "Approval needed").Text)
	if m == nil {
		t.Fatal("no id in the request")
	}
	return m[1]
}

// decisions returns the audit records and what still waits, read from the shared store.
func decisions(t *testing.T, store persistence.Store) ([]access.ExecDecision, []access.ExecRequest) {
	t.Helper()
	var ds []access.ExecDecision
	var reqs []access.ExecRequest
	if err := store.View(func(r persistence.Reader) error {
		var err error
		if ds, err = access.ExecDecisions(r, 0); err != nil {
			return err
		}
		reqs, err = access.ExecRequests(r)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ds, reqs
}

// TestClusterApproveOnAnotherNode: a guest's exec waits on node A; the owner answers /approve
// in their own chat, which node B runs. The decision reaches A's waiting call, which runs the
// command; it is audited once, and nothing is left in the store.
func TestClusterApproveOnAnotherNode(t *testing.T) {
	nodes := approvalCluster(t)
	a, b := nodes["a"], nodes["b"]
	id := requestOf(t, a)
	a.sentTo(t, "ops", "Waiting for the owner to approve")
	b.inject(t, messages.Inbound{ChatID: "owner", SenderID: "owner", Text: "/approve " + strings.ToLower(id)})
	b.sentTo(t, "owner", "Approved "+id)
	if got := a.sentTo(t, "ops", "result:"); !strings.Contains(got.Text, "ran-on-approval") {
		t.Errorf("the run's answer %q; want the command's output", got.Text)
	}
	ds, pending := decisions(t, a.store)
	if len(ds) != 1 || ds[0].ID != id || ds[0].Decision != access.DecisionApproved || ds[0].By != "fake:owner" || len(pending) != 0 {
		t.Errorf("audit %+v, pending %+v; want one approval by fake:owner and nothing waiting", ds, pending)
	}
	waitUntil(t, "the decision's inbox entry to be taken", func() bool { return inboxEmpty(t, a.store, chatKey("ops")) })
	if n := len(b.script.Requests()); n != 1 {
		t.Errorf("node B's model was asked %d times; want once (the owner's hi): the decision is no message to run", n)
	}
}

// TestClusterApprovalWaitMovesWithItsSession: while a call waits for the owner, its session
// moves from node A to node B (which started before the request was made). B resumes the run,
// finds the request in the store, asks the owner again under the same id, and the owner's
// /approve reaches the call on B: it runs once, one audit record.
func TestClusterApprovalWaitMovesWithItsSession(t *testing.T) {
	nodes := approvalCluster(t)
	a, b := nodes["a"], nodes["b"]
	id := requestOf(t, a)
	a.sentTo(t, "ops", "Waiting for the owner to approve")
	a.own.set(chatKey("ops"), false)
	a.rt.PartitionsChanged()
	waitUntil(t, "node A to stop the session", func() bool { return len(a.rt.LiveSessionKeys()) == 0 })
	b.owns("ops")
	again := b.sentTo(t, "owner", "Approval needed")
	if !strings.Contains(again.Text, "["+id+"]") || !strings.Contains(again.Text, "moved to another reef node") {
		t.Fatalf("asked again: %q; want the same request %s, and why", again.Text, id)
	}
	b.inject(t, messages.Inbound{ChatID: "owner", SenderID: "owner", Text: "/approve " + id})
	b.sentTo(t, "owner", "Approved "+id)
	if got := b.sentTo(t, "ops", "result:"); !strings.Contains(got.Text, "ran-on-approval") {
		t.Errorf("the run's answer on node B %q; want the command's output", got.Text)
	}
	ds, pending := decisions(t, b.store)
	if len(ds) != 1 || ds[0].Decision != access.DecisionApproved || len(pending) != 0 {
		t.Errorf("audit %+v, pending %+v; want one approval", ds, pending)
	}
}

// TestClusterDecidedOnceByTwoNodes: the owner's CLI on nodes B and C, neither of which runs
// the waiting call, answer the same request at once, approve and deny: one decision wins, the
// other is told nothing waits, the audit holds one record, and the run on node A acts on the
// winner.
func TestClusterDecidedOnceByTwoNodes(t *testing.T) {
	nodes := approvalCluster(t, "c")
	a, b, c := nodes["a"], nodes["b"], nodes["c"]
	id := requestOf(t, a)
	type answer struct {
		decision, text string
		err            error
	}
	answers := make(chan answer, 2)
	var start sync.WaitGroup
	start.Add(1)
	for node, decision := range map[*pgNode]string{b: access.DecisionApproved, c: access.DecisionDenied} {
		go func() {
			start.Wait()
			text, err := node.rt.DecideApproval(t.Context(), id, decision)
			answers <- answer{decision, text, err}
		}()
	}
	start.Done()
	var won []string
	for range 2 {
		ans := <-answers
		switch {
		case ans.err == nil:
			won = append(won, ans.decision)
		case !errors.Is(ans.err, access.ErrNoExecRequest):
			t.Errorf("%s: %v", ans.decision, ans.err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("decisions that took effect: %v; want exactly one", won)
	}
	want := "ran-on-approval"
	if won[0] == access.DecisionDenied {
		want = "the owner denied this command"
	}
	if got := a.sentTo(t, "ops", "result:"); !strings.Contains(got.Text, want) {
		t.Errorf("the run's answer %q after %s; want %q", got.Text, won[0], want)
	}
	ds, pending := decisions(t, c.store)
	if len(ds) != 1 || ds[0].Decision != won[0] || len(pending) != 0 {
		t.Errorf("audit %+v, pending %+v; want one record, %s", ds, pending, won[0])
	}
}

// TestClusterApprovalsListAndPrefixes: /approvals on node B lists the request waiting on
// node A; "always" approved on B lets A run the next command of that prefix without asking,
// and a revoke on B makes A ask again.
func TestClusterApprovalsListAndPrefixes(t *testing.T) {
	nodes := approvalCluster(t)
	a, b := nodes["a"], nodes["b"]
	id := requestOf(t, a)
	owner := func(text string) { b.inject(t, messages.Inbound{ChatID: "owner", SenderID: "owner", Text: text}) }
	owner("/approvals")
	b.sentTo(t, "owner", id+"  fake:42 (Ann) in group ops")
	owner("/approve " + id + " always")
	b.sentTo(t, "owner", "Approved "+id)
	a.sentTo(t, "ops", "result:")

	ask := func() { // the same command again, in ops
		a.inject(t, messages.Inbound{ChatID: "ops", ChatType: messages.ChatGroup, SenderID: "42", Mentioned: true, Text: "please run it"})
	}
	ask()
	if got := a.sentTo(t, "ops", "result:"); !strings.Contains(got.Text, "ran-on-approval") {
		t.Errorf("with the prefix allowed always on another node: %q; want it run without asking", got.Text)
	}
	ds, _ := decisions(t, b.store)
	if len(ds) != 2 || ds[1].Decision != access.DecisionAlways || ds[0].Decision != access.DecisionPrefix {
		t.Fatalf("audit %+v; want the always and the prefix's run", ds)
	}
	owner("/approvals revoke " + ds[1].Prefix)
	b.sentTo(t, "owner", "Revoked")
	ask()
	a.sentTo(t, "ops", "Waiting for the owner to approve")
	requestOf(t, a)
}

// TestClusterSessionsSendWaits: a run on node A sends to a session node B runs and waits for
// its reply, which comes back across the nodes.
func TestClusterSessionsSendWaits(t *testing.T) {
	url := pgtest.URL(t)
	seven := chatKey("7")
	o := pgNodeOpts{url: url, workspace: t.TempDir(), extra: sessions.Tools(),
		respond: func(req fakellm.Request) fakellm.Reply {
			last := req.Messages[len(req.Messages)-1]
			switch {
			case last.Role == messages.RoleSystem && strings.Contains(last.Content, "[Inter-session message"):
				return fakellm.Reply{Text: "blue"}
			case last.Role == messages.RoleTool:
				return fakellm.Reply{Text: "tool said: " + last.Content}
			case strings.Contains(last.Content, "ask seven"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("q", "sessions_send",
					map[string]any{"sessionKey": seven, "message": "favourite colour?", "timeoutSeconds": 20})}}
			}
			return fakellm.Reply{Text: "hello"}
		}}
	a, b := startPGNode(t, "a", o), startPGNode(t, "b", o)
	a.owns("42")
	b.owns("7")
	b.inject(t, messages.Inbound{ChatID: "7", SenderID: "7", Text: "hi"})
	b.sentTo(t, "7", "hello")
	a.inject(t, messages.Inbound{ChatID: "42", SenderID: "42", Text: "ask seven"})
	got := a.sentTo(t, "42", "tool said:")
	if !strings.Contains(got.Text, `"status":"ok"`) || !strings.Contains(got.Text, `"reply":"blue"`) {
		t.Errorf("the sender's answer %q; want the receiver's reply", got.Text)
	}
	if n := len(a.script.Requests()); n != 2 {
		t.Errorf("node A's model was asked %d times; want 2: the reply's entry is no message to run", n)
	}
	waitUntil(t, "the reply's inbox entry to be taken", func() bool { return inboxEmpty(t, a.store, chatKey("42")) })
}

// TestClusterPairingApprovedOnAnotherNode: a stranger asks node A for access and gets a
// pairing code; the owner approves it through node B (what `reef pairing approve` does on
// B's control socket). Access is read from the shared store on every message, so the
// stranger's next message, received by node A and run by node B, is answered, and a denial
// through node A shuts out another stranger received on B.
func TestClusterPairingApprovedOnAnotherNode(t *testing.T) {
	o := pgNodeOpts{url: pgtest.URL(t), workspace: t.TempDir(), access: &access.Rules{DMPolicy: "pairing", AllowFrom: []string{"owner"}},
		respond: func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "welcome"} }}
	a, b := startPGNode(t, "a", o), startPGNode(t, "b", o)
	b.owns("99", "77")
	decide := func(n *pgNode, code string, approve func(persistence.Tx, string, string, time.Time) (access.Pairing, error)) {
		t.Helper()
		if err := n.rt.Write(t.Context(), func(tx persistence.Tx) error {
			_, err := approve(tx, "fake", code, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	a.inject(t, messages.Inbound{ChatID: "99", SenderID: "99", Text: "hi"})
	decide(b, codeIn(t, a.sentTo(t, "99", "reef pairing approve").Text), access.ApprovePairing)
	a.inject(t, messages.Inbound{ChatID: "99", SenderID: "99", Text: "hi again"})
	b.sentTo(t, "99", "welcome")

	b.inject(t, messages.Inbound{ChatID: "77", SenderID: "77", Text: "hi"})
	decide(a, codeIn(t, b.sentTo(t, "77", "reef pairing approve").Text), access.DenyPairing)
	b.inject(t, messages.Inbound{ChatID: "77", SenderID: "77", Text: "hi again"})
	if got := b.sentTo(t, "77", "reef pairing approve"); !strings.Contains(got.Text, "code") {
		t.Errorf("after the denial: %q; want a new pairing code, not an answer", got.Text)
	}
	if n := len(a.script.Requests()) + len(b.script.Requests()); n != 1 {
		t.Errorf("%d model calls; want 1 (the approved stranger's)", n)
	}
}

// TestClusterMessageEditAfterMove: a run on node A sends a message with the message tool; the
// conversation moves to node B, whose run edits that message and then deletes it. Node B's
// Connector never sent it: it finds it in the store's record of what was sent in the chat.
func TestClusterMessageEditAfterMove(t *testing.T) {
	platform := fake.NewEditable()
	sentID := regexp.MustCompile(`sent \(messageId ([^)]+)\)`)
	o := pgNodeOpts{url: pgtest.URL(t), workspace: t.TempDir(), extra: []tools.Tool{message.New()}, platform: platform,
		respond: func(req fakellm.Request) fakellm.Reply {
			last := req.Messages[len(req.Messages)-1]
			var id string
			for _, m := range req.Messages {
				if g := sentID.FindStringSubmatch(m.Content); m.Role == messages.RoleTool && g != nil {
					id = g[1]
				}
			}
			switch {
			case last.Role == messages.RoleTool:
				return fakellm.Reply{Text: "tool said: " + last.Content}
			case strings.Contains(last.Content, "send a note"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("m1", "message", map[string]any{"action": "send", "message": "Working on it"})}}
			case strings.Contains(last.Content, "edit the note"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("m2", "message", map[string]any{"action": "edit", "messageId": id, "message": "Done now"})}}
			case strings.Contains(last.Content, "delete the note"):
				return fakellm.Reply{ToolCalls: []messages.ToolCall{call("m3", "message", map[string]any{"action": "delete", "messageId": id})}}
			}
			return fakellm.Reply{Text: "hello"}
		}}
	a, b := startPGNode(t, "a", o), startPGNode(t, "b", o)
	a.owns("5")
	say := func(text string) {
		if err := platform.Inject(context.Background(), messages.Inbound{ChatID: "5", SenderID: "5", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	// shown waits until the chat shows a message containing want (sent, or edited into a
	// draft: the Editable publishes only sends) and returns it.
	shown := func(want ...string) string {
		t.Helper()
		var got string
		deadline := time.Now().Add(testutil.Timeout)
		for got == "" {
			for _, text := range platform.Shown("5") {
				if strings.Contains(text, want[0]) && (len(want) == 1 || strings.Contains(text, want[1])) {
					got = text
				}
			}
			if got == "" && time.Now().After(deadline) {
				t.Fatalf("the chat never showed %q: %q", want, platform.Shown("5"))
			}
			time.Sleep(5 * time.Millisecond) // polling the fake platform
		}
		return got
	}
	say("send a note")
	shown("Working on it")
	got := shown("tool said:", "sent (messageId")
	m := sentID.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("the send's result %q names no message", got)
	}

	a.own.set(chatKey("5"), false) // the conversation moves to node B
	a.rt.PartitionsChanged()
	waitUntil(t, "node A to stop the session", func() bool { return len(a.rt.LiveSessionKeys()) == 0 })
	b.owns("5")
	say("edit the note")
	if got := shown("tool said:", "edited (messageId"); !strings.Contains(got, "edited (messageId "+m[1]+")") {
		t.Fatalf("the edit on node B: %q", got)
	}
	if texts, _ := platform.History(m[1]); len(texts) == 0 || texts[len(texts)-1] != "Done now" {
		t.Errorf("the message's texts on the platform: %q; want it edited", texts)
	}
	say("delete the note")
	if got := shown("tool said:", "deleted (messageId"); !strings.Contains(got, "deleted (messageId "+m[1]+")") {
		t.Fatalf("the delete on node B: %q", got)
	}
	if _, deletes := platform.History(m[1]); deletes != 1 {
		t.Errorf("the message was deleted %d times; want once", deletes)
	}
}
