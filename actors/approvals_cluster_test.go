package actors_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// approvalCluster is two nodes with approvals in owner mode: node A runs group "ops", whose
// members may use exec, node B the owner's direct chat.
func approvalCluster(t *testing.T, more ...string) map[string]*pgNode {
	t.Helper()
	return approvalClusterTimeout(t, time.Hour, more...)
}

// approvalClusterTimeout is approvalCluster with the requests' timeout.
func approvalClusterTimeout(t *testing.T, timeout time.Duration, more ...string) map[string]*pgNode {
	t.Helper()
	o := pgNodeOpts{url: pgtest.URL(t), workspace: t.TempDir(),
		access:    &access.Rules{DMPolicy: "open", AllowFrom: []string{"*", "owner"}, Groups: []string{"ops"}},
		guests:    &tools.GuestRules{Groups: map[string]tools.GroupGrant{"ops": {Grant: tools.Grant{Allow: []string{"exec"}}}}},
		approvals: actors.ApprovalSettings{Mode: access.ApprovalsOwner, Timeout: timeout},
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

// TestClusterApprovalTimesOut: a request nobody answers times out on the node that waits;
// the decision takes the same way as the owner's (the session's inbox), the run goes on
// without the command, and the audit holds one timeout.
func TestClusterApprovalTimesOut(t *testing.T) {
	nodes := approvalClusterTimeout(t, time.Second)
	a := nodes["a"]
	requestOf(t, a)
	if got := a.sentTo(t, "ops", "result:"); !strings.Contains(got.Text, "did not approve this command within 1s") {
		t.Errorf("the run's answer %q; want the timeout's note", got.Text)
	}
	ds, pending := decisions(t, a.store)
	if len(ds) != 1 || ds[0].Decision != access.DecisionTimeout || len(pending) != 0 {
		t.Errorf("audit %+v, pending %+v; want one timeout", ds, pending)
	}
	waitUntil(t, "the decision's inbox entry to be taken", func() bool { return inboxEmpty(t, a.store, chatKey("ops")) })
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
