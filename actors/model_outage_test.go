package actors_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// outageNotice is what a chat on a platform is told: the cause in plain words (the rig's
// server answers 503), without the server's address, and what the operator can do.
const outageNotice = "The model is unreachable right now: the model's server is overloaded or down (503). " +
	"I will answer when it is back; if this lasts, the operator can run `reef doctor`."

// modelRig is a model server that can be taken down: while down, calls get 503 and the
// breaker's probe is refused. Time is a fake clock.
type modelRig struct {
	down   atomic.Bool
	script *fakellm.Script
	clock  *testutil.Clock
	bs     *providers.Breakers
}

func (r *modelRig) Ping(context.Context) error {
	if r.down.Load() {
		return errors.New("connection refused")
	}
	return nil
}

func newModelRig() *modelRig {
	r := &modelRig{script: fakellm.NewScript(), clock: testutil.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))}
	r.script.Respond = func(req fakellm.Request) fakellm.Reply {
		if r.down.Load() {
			return fakellm.Reply{Status: 503}
		}
		return fakellm.Reply{Text: "answer to " + lastUserText(lastUser(req))}
	}
	return r
}

// lastUserText is the message text in a formatted user entry (its last line).
func lastUserText(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// harness starts a gateway whose model goes through fresh breakers (a restart has new ones).
func (r *modelRig) harness(t *testing.T, dbPath string, wait time.Duration) *harness {
	r.bs = providers.NewBreakers(providers.BreakerConfig{Clock: r.clock, FirstProbe: 5 * time.Second, MaxProbe: 20 * time.Second})
	t.Cleanup(r.bs.Close)
	p := r.bs.Guard("fake", "fake", providers.Retry(fakellm.New(r.script), providers.RetryConfig{MaxRetries: -1}), r)
	return newHarness(t, harnessOpts{provider: p, dbPath: dbPath, clock: r.clock,
		session:  actors.SessionSettings{Queue: persistence.QueueSettings{Mode: actors.QueueFollowup}},
		depsHook: func(d *actors.Deps) { d.Outages, d.OutageWait = r.bs, wait }})
}

// waiting is how many messages wait for the model, as the breakers count them.
func (r *modelRig) waiting() int {
	n := 0
	for _, o := range r.bs.Outages() {
		n = o.Waiting
	}
	return n
}

// stored reports how many inbox entries and outage records the store holds.
func stored(t *testing.T, h *harness, chats ...string) (inbox, waits int) {
	t.Helper()
	err := h.store.View(func(rd persistence.Reader) error {
		for _, c := range chats {
			in, err := rd.Inbox(h.key(c))
			if err != nil {
				return err
			}
			inbox += len(in)
		}
		w, err := actors.ListWaitingForModel(rd)
		waits = len(w)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return inbox, waits
}

// TestModelOutageWaits: the model's server is down for 20 s while three messages arrive in
// two chats. Each chat is told once; when the probe finds the server back, every message is
// answered, in order, once.
func TestModelOutageWaits(t *testing.T) {
	rig := newModelRig()
	rig.down.Store(true)
	h := rig.harness(t, "", 0)

	h.say("a", "A1")
	h.say("b", "B1")
	h.say("a", "A2")
	notices := map[string]int{}
	for range 2 {
		out := h.reply()
		if out.Text != outageNotice {
			t.Fatalf("sent %q to %s during the outage, want the notice", out.Text, out.ChatID)
		}
		notices[out.ChatID]++
	}
	if notices["a"] != 1 || notices["b"] != 1 {
		t.Fatalf("notices per chat %v, want one each", notices)
	}
	waitUntil(t, "three messages waiting", func() bool { return rig.waiting() == 3 })
	if inbox, waits := stored(t, h, "a", "b"); inbox != 3 || waits != 2 {
		t.Fatalf("store holds %d inbox entries and %d waits, want 3 and 2", inbox, waits)
	}

	rig.clock.Advance(5 * time.Second)  // probe: still down
	rig.clock.Advance(10 * time.Second) // probe: still down
	rig.down.Store(false)               // back after 20 s
	rig.clock.Advance(20 * time.Second) // probe answers

	got := map[string][]string{}
	for range 3 {
		out := h.reply()
		got[out.ChatID] = append(got[out.ChatID], out.Text)
	}
	if want := []string{"answer to A1", "answer to A2"}; fmt.Sprint(got["a"]) != fmt.Sprint(want) {
		t.Errorf("chat a got %q, want %q", got["a"], want)
	}
	if want := []string{"answer to B1"}; fmt.Sprint(got["b"]) != fmt.Sprint(want) {
		t.Errorf("chat b got %q, want %q", got["b"], want)
	}
	h.say("a", "A3") // nothing else was sent before its answer: each message was answered once
	if out := h.reply(); out.Text != "answer to A3" {
		t.Errorf("next message %q, want the answer to A3", out.Text)
	}
	if inbox, waits := stored(t, h, "a", "b"); inbox != 0 || waits != 0 {
		t.Errorf("store holds %d inbox entries and %d waits after recovery, want none", inbox, waits)
	}
	if out := rig.bs.Outages(); len(out) != 0 {
		t.Errorf("outages after recovery: %+v", out)
	}
}

// TestModelOutageGivesUp: past llm.outageWaitMinutes the waiting messages are closed and the
// chat is told once; they are never answered after.
func TestModelOutageGivesUp(t *testing.T) {
	rig := newModelRig()
	rig.down.Store(true)
	h := rig.harness(t, "", 30*time.Minute)
	h.say("a", "A1")
	if out := h.reply(); out.Text != outageNotice {
		t.Fatalf("sent %q, want the notice", out.Text)
	}
	h.say("a", "A2")
	waitUntil(t, "two messages waiting", func() bool { return rig.waiting() == 2 })
	h.say("a", "/status")
	if out := h.reply().Text; !strings.Contains(out, "Model: UNREACHABLE since") || !strings.Contains(out, "2 message(s) waiting") ||
		!strings.Contains(out, "fake next probe in 5s") || !strings.Contains(out, "gives up in 30m") {
		t.Errorf("/status during the outage:\n%s\nwant the outage, the 2 waiting messages, the next probe and the bound", out)
	}
	rig.clock.Advance(31 * time.Minute)
	out := h.reply()
	if !strings.Contains(out.Text, "gave up: 2 message(s)") {
		t.Fatalf("sent %q, want that it gave up on the 2 messages", out.Text)
	}
	if inbox, waits := stored(t, h, "a"); inbox != 0 || waits != 0 {
		t.Errorf("store holds %d inbox entries and %d waits after giving up, want none", inbox, waits)
	}
	rig.down.Store(false)
	rig.clock.Advance(time.Minute) // the probe finds it back
	h.say("a", "A3")
	if out := h.reply(); out.Text != "answer to A3" {
		t.Errorf("next message %q, want the answer to A3 (the closed messages are never answered)", out.Text)
	}
}

// TestModelOutageAcrossRestart: reef restarts during the outage; the message still waits,
// the chat is not told again, and it is answered once when the model is back.
func TestModelOutageAcrossRestart(t *testing.T) {
	rig := newModelRig()
	rig.down.Store(true)
	db := filepath.Join(t.TempDir(), "reef.db")
	h := rig.harness(t, db, 0)
	h.say("a", "A1")
	if out := h.reply(); out.Text != outageNotice {
		t.Fatalf("sent %q, want the notice", out.Text)
	}
	waitUntil(t, "the message waiting", func() bool { return rig.waiting() == 1 })
	h.stop()

	h = rig.harness(t, db, 0) // the restarted gateway runs the message: the model is still down
	waitUntil(t, "the message waiting again", func() bool { return rig.waiting() == 1 })
	rig.down.Store(false)
	rig.clock.Advance(5 * time.Second)
	if out := h.reply(); out.Text != "answer to A1" {
		t.Fatalf("after the restart the chat got %q first, want the answer (no second notice)", out.Text)
	}
	h.say("a", "A2")
	if out := h.reply(); out.Text != "answer to A2" {
		t.Errorf("next message %q, want the answer to A2 (A1 answered once)", out.Text)
	}
	if inbox, waits := stored(t, h, "a"); inbox != 0 || waits != 0 {
		t.Errorf("store holds %d inbox entries and %d waits, want none", inbox, waits)
	}
}

// TestRequestErrorIsNotAnOutage: a rejected key is told at once, as before; nothing waits.
func TestRequestErrorIsNotAnOutage(t *testing.T) {
	rig := newModelRig()
	rig.script.Add(fakellm.Reply{Status: 401})
	h := rig.harness(t, "", 0)
	h.say("a", "A1")
	if out := h.reply(); !strings.Contains(out.Text, "rejected reef's API key") {
		t.Fatalf("sent %q, want the key error at once", out.Text)
	}
	if inbox, waits := stored(t, h, "a"); inbox != 0 || waits != 0 {
		t.Errorf("store holds %d inbox entries and %d waits, want none", inbox, waits)
	}
}

// TestModelOutageStopDropsTheWait: /stop while messages wait for the model drops them and the
// wait; when the model is back nothing of theirs is answered.
func TestModelOutageStopDropsTheWait(t *testing.T) {
	rig := newModelRig()
	rig.down.Store(true)
	rig.script.Add(fakellm.Reply{ToolCalls: []messages.ToolCall{call("c1", "ls", map[string]any{"path": "."})}})
	h := rig.harness(t, "", 0)
	h.say("a", "A1") // the run lists the workspace, then the model is down
	if out := h.reply(); out.Text != outageNotice {
		t.Fatalf("sent %q, want the notice", out.Text)
	}
	waitUntil(t, "the message waiting", func() bool { return rig.waiting() == 1 })
	h.say("a", "/stop")
	if out := h.reply(); !strings.Contains(out.Text, "dropped 1 waiting") {
		t.Fatalf("/stop answered %q, want that it dropped the waiting message", out.Text)
	}
	waitUntil(t, "the wait dropped", func() bool { inbox, waits := stored(t, h, "a"); return inbox == 0 && waits == 0 })
	rig.down.Store(false)
	rig.clock.Advance(5 * time.Second)
	h.say("a", "A2")
	if out := h.reply(); out.Text != "answer to A2" {
		t.Errorf("next message %q, want the answer to A2 alone", out.Text)
	}
	reqs := rig.script.Requests()
	if got := toolResults(reqs[len(reqs)-1]); len(got) != 0 {
		t.Errorf("A2's run started from the dropped run's tool results: %+v", got)
	}
}
