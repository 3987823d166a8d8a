package actors_test

import (
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// switchOwnership is a cluster node's share for tests: the sessions it owns, switched by the
// test; each gain is a new epoch, and Fence refuses claims of sessions lost or of an older epoch.
type switchOwnership struct {
	mu    sync.Mutex
	owned map[string]int64
	epoch int64
}

func (o *switchOwnership) Owns(key string) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.owned[key]
	return e, ok
}

func (o *switchOwnership) Fence(_ persistence.Tx, claims map[string]int64) (map[string]bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	lost := map[string]bool{}
	for k, e := range claims {
		if held, ok := o.owned[k]; !ok || e != 0 && e != held {
			lost[k] = true
		}
	}
	return lost, nil
}

func (o *switchOwnership) set(key string, owned bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.owned == nil {
		o.owned = map[string]int64{}
	}
	if owned {
		o.epoch++
		o.owned[key] = o.epoch
	} else {
		delete(o.owned, key)
	}
}

// TestClusterRouterRunsOwnedSessionsOnly: in cluster mode a message for a session this node
// does not own is stored and not run; gaining the session's partition runs it; losing it
// stops its run, whose result is then not recorded; gaining it again runs the message once.
func TestClusterRouterRunsOwnedSessionsOnly(t *testing.T) {
	script := fakellm.NewScript(fakellm.Reply{Delay: time.Hour}, fakellm.Reply{Text: "the answer"})
	own := &switchOwnership{}
	h := newHarness(t, harnessOpts{script: script, depsHook: func(d *actors.Deps) { d.Cluster = own }})
	key := h.key("c1")
	inbox := func() int {
		var n int
		if err := h.store.View(func(r persistence.Reader) error {
			in, err := r.Inbox(key)
			n = len(in)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(testutil.Timeout)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond) // polling the store and the fake's record
		}
	}

	h.say("c1", "hello")
	if live := h.rt.LiveSessionKeys(); len(live) != 0 || inbox() != 1 {
		t.Fatalf("a message for a session of another node: live %v, inbox %d; want it stored and not run", live, inbox())
	}

	own.set(key, true)
	h.rt.PartitionsChanged()
	waitFor("the run's model call", func() bool { return len(script.Requests()) == 1 })

	own.set(key, false)
	h.rt.PartitionsChanged()
	waitFor("the session to stop", func() bool { return len(h.rt.LiveSessionKeys()) == 0 })
	if n := len(h.transcript("c1")); n != 0 || inbox() != 1 {
		t.Fatalf("after the partition was lost: %d transcript entries, inbox %d; want none and the message kept", n, inbox())
	}

	own.set(key, true)
	h.rt.PartitionsChanged()
	if got := h.reply(); got.Text != "the answer" {
		t.Fatalf("reply %q", got.Text)
	}
	waitFor("the inbox to empty", func() bool { return inbox() == 0 })
	var roles []messages.Role
	for _, e := range h.transcript("c1") {
		roles = append(roles, e.Role)
	}
	if len(roles) != 2 || roles[0] != messages.RoleUser || roles[1] != messages.RoleAssistant {
		t.Errorf("transcript roles %v; want the message and its answer once", roles)
	}
	if n := len(script.Requests()); n != 2 {
		t.Errorf("%d model calls; want 2 (the stopped run, and the run on the gained partition)", n)
	}
}

// TestClusterInboxWrittenElsewhere: an entry another node wrote into the inbox of a live
// session this node owns is run when the notification comes, once although it is notified
// twice and the sweep finds it too.
func TestClusterInboxWrittenElsewhere(t *testing.T) {
	script := fakellm.NewScript(fakellm.Reply{Text: "first answer"}, fakellm.Reply{Text: "second answer"}, fakellm.Reply{Text: "a third run"})
	own := &switchOwnership{}
	h := newHarness(t, harnessOpts{script: script, depsHook: func(d *actors.Deps) { d.Cluster = own }})
	key := h.key("c2")
	own.set(key, true)
	h.say("c2", "hello")
	if got := h.reply(); got.Text != "first answer" {
		t.Fatalf("reply %q", got.Text)
	}
	if live := h.rt.LiveSessionKeys(); len(live) != 1 {
		t.Fatalf("live sessions %v; want c2's", live)
	}
	// Another node accepted a message of this chat: its inbox entry, written without routing.
	err := h.rt.Write(t.Context(), func(tx persistence.Tx) error {
		_, err := tx.AppendInbox(key, messages.Inbound{Channel: "fake", ChatID: "c2", SenderID: "c2",
			ChatType: messages.ChatDirect, Text: "written on another node"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	h.rt.InboxNotified(key)
	h.rt.InboxNotified(key)
	h.rt.InboxNotified("") // the listener reconnected: sweep
	if got := h.reply(); got.Text != "second answer" {
		t.Fatalf("reply %q", got.Text)
	}
	h.rt.InboxNotified(key) // a late notification of an entry answered already
	h.stop()
	if n := len(script.Requests()); n != 2 {
		t.Errorf("%d model calls; want 2: the entry written elsewhere ran once", n)
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("a further reply %q", out.Text)
	default:
	}
}
