package actors_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/tools"
)

// TestConversationSurvivesRestart: after a full shutdown, a new actor system on the same
// database gives the model the earlier messages.
func TestConversationSurvivesRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "reef.db")
	h := newHarness(t, harnessOpts{dbPath: db, script: fakellm.NewScript(
		fakellm.Reply{Text: "Nice to meet you, Ada."}, fakellm.Reply{Text: "Noted: the launch code is 7-TANGO."})})
	h.say("7", "Hi, I am Ada.")
	h.reply()
	h.say("7", "Remember the launch code 7-TANGO.")
	h.reply()
	h.stop()

	script := fakellm.NewScript(fakellm.Reply{Text: "Your name is Ada and the code is 7-TANGO."})
	h2 := newHarness(t, harnessOpts{dbPath: db, script: script})
	h2.say("7", "What do you remember?")
	h2.reply()
	req := script.Requests()[0]
	for _, want := range []string{"I am Ada", "Nice to meet you, Ada.", "7-TANGO", "What do you remember?"} {
		if !requestHas(req, want) {
			t.Errorf("request after restart lacks %q", want)
		}
	}
	if n := len(req.Messages); n != 5 {
		t.Errorf("request after restart has %d messages, want 5", n)
	}
}

// TestKill9MidTurn kills a reef process in the middle of a tool call. The database opens and
// passes its check, no tool call is left without a result, the accepted message is still in
// the inbox, and a restarted reef answers it exactly once without being asked again.
func TestKill9MidTurn(t *testing.T) {
	if os.Getenv("REEF_KILL_CHILD_DB") != "" {
		t.Skip("run by the parent test only")
	}
	db := filepath.Join(t.TempDir(), "reef.db")
	killChildAt(t, "TestKillChild", "REEF_KILL_CHILD_DB="+db, "TOOL_STARTED")

	store, err := bolt.Open(db, bolt.Options{})
	if err != nil {
		t.Fatalf("database after kill -9: %v", err)
	}
	if err := store.Check(); err != nil {
		t.Fatalf("database check after kill -9: %v", err)
	}
	key := sessionkey.For("main", "", &messages.Inbound{Channel: "fake", ChatID: "9", SenderID: "9", ChatType: messages.ChatDirect})
	var inbox []persistence.InboxItem
	var entries []persistence.Entry
	store.View(func(r persistence.Reader) error {
		inbox, _ = r.Inbox(key)
		entries, _ = r.Messages(key, 0)
		return nil
	})
	store.Close()
	if len(inbox) != 1 || inbox[0].Text != "please run the slow tool" {
		t.Fatalf("inbox after kill -9 = %+v, want the accepted message", inbox)
	}
	checkPairs(t, entries)

	script := fakellm.NewScript(fakellm.Reply{Text: "recovered answer"})
	h := newHarness(t, harnessOpts{dbPath: db, script: script})
	if got := h.reply(); got.ChatID != "9" || got.Text != "recovered answer" {
		t.Fatalf("after restart got %+v, want the recovered answer in chat 9", got)
	}
	h.stop()
	select {
	case extra := <-h.ch.Sent:
		t.Fatalf("a second reply was sent: %+v", extra)
	default:
	}
	if n := len(script.Requests()); n != 1 {
		t.Errorf("provider called %d times after restart, want 1", n)
	}
}

// TestKillChild is the process TestKill9MidTurn kills.
func TestKillChild(t *testing.T) {
	db := os.Getenv("REEF_KILL_CHILD_DB")
	if db == "" {
		t.Skip("run by TestKill9MidTurn only")
	}
	var once sync.Once
	slow := &testTool{name: "slow", run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		once.Do(func() { fmt.Println("TOOL_STARTED") })
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}}
	script := fakellm.NewScript(fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", "slow", map[string]any{})}})
	h := newHarness(t, harnessOpts{dbPath: db, script: script, extra: []tools.Tool{slow}})
	h.say("9", "please run the slow tool")
	time.Sleep(time.Minute) // the parent kills this process
}

// TestCancelRun: /stop-style cancellation ends a run whose provider hangs, within a second,
// and the next message is answered.
func TestCancelRun(t *testing.T) {
	script := fakellm.NewScript(fakellm.Reply{Hang: true}, fakellm.Reply{Text: "fresh answer"})
	h := newHarness(t, harnessOpts{script: script})
	h.say("5", "think forever")
	waitFor(t, func() bool { return len(script.Requests()) == 1 }) // the hang is being played
	start := time.Now()
	h.rt.Cancel(h.key("5"))
	if got := h.reply(); got.Text != "Stopped." {
		t.Fatalf("reply after cancel = %q", got.Text)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %s, want under 1s", d)
	}
	h.say("5", "hello again")
	if got := h.reply(); got.Text != "fresh answer" {
		t.Fatalf("next reply = %q", got.Text)
	}
}

// TestDuplicateAndOversizedInbound: a redelivered platform message runs the agent once; an
// oversized one is refused with a notice and never reaches the model.
func TestDuplicateAndOversizedInbound(t *testing.T) {
	script := fakellm.NewScript(fakellm.Reply{Text: "once"})
	h := newHarness(t, harnessOpts{script: script})
	ctx := context.Background()
	in := messages.Inbound{ChatID: "3", MessageID: "update-77", Text: "hello"}
	for range 3 {
		if err := h.ch.Inject(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.reply(); got.Text != "once" {
		t.Fatalf("reply = %q", got.Text)
	}
	if err := h.ch.Inject(ctx, messages.Inbound{ChatID: "4", Text: strings.Repeat("x", 40<<10)}); err != nil {
		t.Fatal(err)
	}
	if got := h.reply(); got.ChatID != "4" || !strings.Contains(got.Text, "too long") {
		t.Fatalf("oversized reply = %+v", got)
	}
	if n := len(script.Requests()); n != 1 {
		t.Errorf("provider called %d times, want 1", n)
	}
}

// TestPassivation: idle sessions stop, and a message afterwards respawns the session with its
// history.
func TestPassivation(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: fmt.Sprintf("seen %d", len(r.Messages))}
	}
	h := newHarness(t, harnessOpts{script: script, now: clock, idle: time.Minute})
	const n = 300
	for i := range n {
		h.say(fmt.Sprint(i), "hello")
	}
	for range n {
		h.reply()
	}
	deadline := time.Now().Add(testutil.Timeout)
	for live, actors := h.rt.SessionCounts(); live != 0 || actors != 0; live, actors = h.rt.SessionCounts() {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still live, %d Session actors not terminated after passivation", live, actors)
		}
		if live > 0 {
			// The clock moves on each round: a session's idle report may reach the Router
			// after a round's time was read, and it must look idle for IdleAfter from then.
			// Each round waits for the Router's answer (SessionCounts), so it does not spin.
			mu.Lock()
			now = now.Add(2 * time.Minute)
			mu.Unlock()
			h.rt.Sweep()
		}
	}
	h.say("7", "again")
	if got := h.reply(); got.ChatID != "7" || got.Text != "seen 3" {
		t.Fatalf("reply after respawn = %+v, want chat 7 to see its 3 messages", got)
	}
}

// waitFor polls cond until it holds, failing the test after testutil.Timeout.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testutil.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// killChildAt runs this test binary's test named child with env added, waits until it prints
// the line marker, and kills it with SIGKILL: a gateway killed at that point of its work.
func killChildAt(t *testing.T, child, env, marker string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v")
	cmd.Env = append(os.Environ(), env)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reached := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == marker {
				reached <- true
			}
		}
		reached <- false
	}()
	if !testutil.Receive(t, reached) {
		cmd.Process.Kill()
		t.Fatalf("%s exited before it printed %s", child, marker)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}
