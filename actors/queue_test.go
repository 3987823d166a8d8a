package actors_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// gate holds every model request until the test answers it, so a test decides exactly when
// each run moves on.
type gate struct {
	t       *testing.T
	reqs    chan fakellm.Request
	replies chan fakellm.Reply
}

func newGate(t *testing.T) (*gate, *fakellm.Script) {
	g := &gate{t: t, reqs: make(chan fakellm.Request, 16), replies: make(chan fakellm.Reply, 16)}
	s := fakellm.NewScript()
	s.Respond = func(r fakellm.Request) fakellm.Reply {
		g.reqs <- r
		return <-g.replies
	}
	return g, s
}

// next waits for the next model request.
func (g *gate) next() fakellm.Request {
	g.t.Helper()
	return testutil.Receive(g.t, g.reqs)
}

func (g *gate) answer(r fakellm.Reply) { g.replies <- r }

// settled waits until the session has handled every message sent before: /status is
// answered in order, so when its answer arrives the earlier messages reached the session
// (and, in steer mode, its running Turn's mailbox). It returns the status text.
func (h *harness) settled(chat string) string {
	h.t.Helper()
	h.say(chat, "/status")
	for {
		out := h.reply()
		if strings.HasPrefix(out.Text, "Session: ") {
			return out.Text
		}
		h.t.Fatalf("reply %q arrived while waiting for /status", out.Text)
	}
}

// lastUser returns the user texts of a request, in order.
func userTexts(r fakellm.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == messages.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

func hasText(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// blockTool is a tool that runs until the test releases it.
func blockTool(started chan<- string, release <-chan struct{}) tools.Tool {
	return &testTool{name: "slow", run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		started <- c.ID
		select {
		case <-release:
			return tools.Result{Content: "slow done"}, nil
		case <-ctx.Done():
			return tools.Result{}, ctx.Err()
		}
	}}
}

// TestQueueSteer: a message sent while a tool runs is taken into the same run at the tool
// boundary; the run's single reply answers both.
func TestQueueSteer(t *testing.T) {
	g, script := newGate(t)
	started, release := make(chan string, 1), make(chan struct{})
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{blockTool(started, release)}})

	h.say("1", "count the files")
	g.next()
	g.answer(fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", "slow", map[string]any{})}})
	testutil.Receive(t, started)
	h.say("1", "only the .go files please")
	if st := h.settled("1"); !strings.Contains(st, "steer, 1 waiting") {
		t.Fatalf("status = %q, want one steered message waiting", st)
	}
	close(release)
	req := g.next()
	users := userTexts(req)
	if len(users) != 2 || !strings.Contains(users[1], "only the .go files") {
		t.Fatalf("second request users = %q, want the steered message after the first", users)
	}
	last := req.Messages[len(req.Messages)-1]
	prev := req.Messages[len(req.Messages)-2]
	if last.Role != messages.RoleUser || prev.Role != messages.RoleTool {
		t.Errorf("steered message is not right after the tool result: %v then %v", prev.Role, last.Role)
	}
	g.answer(fakellm.Reply{Text: "3 go files"})
	if out := h.reply(); out.Text != "3 go files" {
		t.Fatalf("reply = %q", out.Text)
	}
	checkPairs(t, h.transcript("1"))
	h.settled("1") // no second reply came before this
}

// TestQueueSteerSkipsCallsNotStarted: when the user speaks while the model is still writing
// tool calls, those calls are not run; each gets the "skipped" result.
func TestQueueSteerSkipsCallsNotStarted(t *testing.T) {
	g, script := newGate(t)
	ws := t.TempDir()
	h := newHarness(t, harnessOpts{script: script, workspace: ws})

	h.say("1", "write a file")
	g.next()
	h.say("1", "no wait, don't")
	h.settled("1")
	g.answer(fakellm.Reply{ToolCalls: []messages.ToolCall{call("w1", "write", map[string]any{"path": "x.txt", "content": "x"})}})
	req := g.next()
	var skipped bool
	for _, m := range req.Messages {
		if m.Role == messages.RoleTool && m.ToolCallID == "w1" && strings.Contains(m.Content, "skipped: a new user message arrived") {
			skipped = true
		}
	}
	if !skipped || !hasText(userTexts(req), "don't") {
		t.Fatalf("request = %+v, want w1 skipped and the new message", req.Messages)
	}
	g.answer(fakellm.Reply{Text: "ok, not writing"})
	h.reply()
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("x.txt exists (err %v): a skipped call ran", err)
	}
	checkPairs(t, h.transcript("1"))
}

// TestQueueFollowup: each message that waited gets a run and a reply of its own, in order.
func TestQueueFollowup(t *testing.T) {
	g, script := newGate(t)
	h := newHarness(t, harnessOpts{script: script})
	h.say("1", "/queue followup")
	if out := h.reply(); !strings.Contains(out.Text, "followup") {
		t.Fatalf("/queue reply = %q", out.Text)
	}
	h.say("1", "A")
	g.next()
	h.say("1", "B")
	h.say("1", "C")
	if st := h.settled("1"); !strings.Contains(st, "followup, 2 waiting") {
		t.Fatalf("status = %q", st)
	}
	g.answer(fakellm.Reply{Text: "a"})
	for _, want := range []string{"B", "C"} {
		req := g.next()
		users := userTexts(req)
		if !strings.Contains(users[len(users)-1], want) || hasText(users[:len(users)-1], want) {
			t.Fatalf("request users = %q, want it to end with %s alone", users, want)
		}
		g.answer(fakellm.Reply{Text: strings.ToLower(want)})
	}
	for _, want := range []string{"a", "b", "c"} {
		if out := h.reply(); out.Text != want {
			t.Fatalf("reply = %q, want %q", out.Text, want)
		}
	}
}

// TestQueueCollect: messages that waited get one run after the quiet window (fake clock).
func TestQueueCollect(t *testing.T) {
	g, script := newGate(t)
	clock := testutil.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	h := newHarness(t, harnessOpts{script: script, clock: clock})
	h.say("1", "/queue collect 2s")
	h.reply()
	h.say("1", "A")
	g.next()
	h.say("1", "B")
	clock.Advance(time.Second)
	h.say("1", "C")
	h.settled("1")
	g.answer(fakellm.Reply{Text: "a"})
	if out := h.reply(); out.Text != "a" {
		t.Fatalf("reply = %q", out.Text)
	}
	if st := h.settled("1"); !strings.Contains(st, "collect, 2 waiting") {
		t.Fatalf("status = %q: B and C should wait for the quiet window", st)
	}
	if _, ok := clock.Next(); !ok {
		t.Fatal("no wake-up scheduled for the quiet window")
	}
	clock.Advance(2 * time.Second)
	req := g.next()
	users := userTexts(req)
	if n := len(users); n != 3 || !strings.Contains(users[1], "B") || !strings.Contains(users[2], "C") {
		t.Fatalf("collected run users = %q, want A then B and C together", users)
	}
	g.answer(fakellm.Reply{Text: "bc"})
	if out := h.reply(); out.Text != "bc" {
		t.Fatalf("reply = %q", out.Text)
	}
}

// TestQueueInterrupt: a new message stops the running run without a "Stopped." and is answered.
func TestQueueInterrupt(t *testing.T) {
	g, script := newGate(t)
	h := newHarness(t, harnessOpts{script: script})
	h.say("1", "/queue interrupt")
	h.reply()
	h.say("1", "write a long essay")
	g.next()
	g.answer(fakellm.Reply{Hang: true})
	h.say("1", "actually just say hi")
	req := g.next()
	if users := userTexts(req); len(users) != 2 || !strings.Contains(users[1], "say hi") {
		t.Fatalf("request users = %q", users)
	}
	g.answer(fakellm.Reply{Text: "hi"})
	if out := h.reply(); out.Text != "hi" {
		t.Fatalf("reply = %q, want hi (no Stopped. for an interrupted run)", out.Text)
	}
}

// TestQueueCapSummarize: past the cap the oldest waiting message is dropped, and the model
// is told what it said; nothing stays in the inbox.
func TestQueueCapSummarize(t *testing.T) {
	g, script := newGate(t)
	h := newHarness(t, harnessOpts{script: script})
	h.say("1", "/queue collect debounce:0 cap:2 drop:summarize")
	h.reply()
	h.say("1", "first")
	g.next()
	for _, text := range []string{"second: buy milk", "third", "fourth"} {
		h.say("1", text)
	}
	if st := h.settled("1"); !strings.Contains(st, "2 waiting") {
		t.Fatalf("status = %q", st)
	}
	g.answer(fakellm.Reply{Text: "1"})
	h.reply()
	req := g.next()
	users := userTexts(req)
	if hasText(users, "buy milk") || !hasText(users, "third") || !hasText(users, "fourth") {
		t.Fatalf("users = %q, want third and fourth only", users)
	}
	var note bool
	for _, m := range req.Messages {
		if m.Role == messages.RoleSystem && strings.Contains(m.Content, "dropped") && strings.Contains(m.Content, "buy milk") {
			note = true
		}
	}
	if !note {
		t.Error("the model was not told what the dropped message said")
	}
	g.answer(fakellm.Reply{Text: "2"})
	h.reply()
	h.settled("1")
	h.expectNoInbox("1")
}
