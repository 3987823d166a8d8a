package actors_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
)

// fanOutScript: the parent spawns three labelled children and yields, and answers once no
// sub-agent is still running; children call slow, then answer with what they got.
func fanOutScript() *fakellm.Script {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req) && lastTool(req) == "slow":
			return fakellm.Reply{Text: "done " + taskOf(req)}
		case isChild(req):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case len(completions(req)) > 0:
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: fmt.Sprintf("final report from %d completions", len(completions(req)))}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		}
		var calls []messages.ToolCall
		for _, l := range []string{"A", "B", "C"} {
			calls = append(calls, call("s"+l, subagent.ToolSpawn, map[string]string{"task": "part " + l, "label": l}))
		}
		return fakellm.Reply{ToolCalls: calls}
	}
	return script
}

// TestKill9WhileSubagentsRun: reef is SIGKILLed while three children run their tools after
// the parent yielded. After the restart every child resumes and ends with exactly one
// completion in its parent, and the user gets exactly one final answer.
func TestKill9WhileSubagentsRun(t *testing.T) {
	if os.Getenv("REEF_KILL_SUBAGENTS_DB") != "" {
		t.Skip("run by the parent test only")
	}
	db := filepath.Join(t.TempDir(), "reef.db")
	killChildAt(t, "TestKillSubagentsChild", "REEF_KILL_SUBAGENTS_DB="+db, "CHILDREN_RUNNING")

	store, err := bolt.Open(db, bolt.Options{})
	if err != nil {
		t.Fatalf("database after kill -9: %v", err)
	}
	if err := store.Check(); err != nil {
		t.Fatalf("database check after kill -9: %v", err)
	}
	store.Close()

	slow := &testTool{name: "slow", run: func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{Content: "fast now"}, nil }}
	script := fanOutScript()
	h := newHarness(t, harnessOpts{dbPath: db, script: script, extra: append(sessionsAndWeather(), slow)})
	defer func() {
		if t.Failed() {
			for _, req := range script.Requests() {
				t.Logf("request child=%v last=%q completions=%d", isChild(req), lastTool(req), len(completions(req)))
			}
			for k, l := range links(t, h) {
				t.Logf("link %s %s %s", k, l.Label, l.Status)
			}
			h.store.View(func(r persistence.Reader) error {
				in, _ := r.Inbox(h.key("9"))
				for _, i := range in {
					t.Logf("parent inbox %d %q", i.Seq, i.Source)
				}
				ms, _ := r.Messages(h.key("9"), 0)
				for _, m := range ms {
					t.Logf("parent entry %d %s %.80q", m.Seq, m.Role, m.Content)
				}
				return nil
			})
		}
	}()
	if got := h.reply(); got.Text != "final report from 3 completions" && !strings.HasPrefix(got.Text, "final report") {
		t.Fatalf("after restart the user got %q, want the final report", got.Text)
	}
	waitFor(t, func() bool {
		for _, l := range links(t, h) {
			if l.Active() {
				return false
			}
		}
		return true
	})
	select {
	case extra := <-h.ch.Sent:
		t.Fatalf("a second message reached the user: %q", extra.Text)
	case <-time.After(300 * time.Millisecond):
	}
	all := links(t, h)
	if len(all) != 3 {
		t.Fatalf("%d children, want 3", len(all))
	}
	var parent []persistence.Entry
	h.store.View(func(r persistence.Reader) error { parent, _ = r.Messages(h.key("9"), 0); return nil })
	seen := map[string]int{}
	for _, e := range parent {
		if e.Role == messages.RoleSystem && strings.Contains(e.Content, "[Internal event: a sub-agent finished") {
			for key := range all {
				if strings.Contains(e.Content, "session: "+key+"\n") {
					seen[key]++
				}
			}
		}
	}
	for key, l := range all {
		if l.Status != messages.SubagentCompleted || seen[key] != 1 {
			t.Errorf("child %s (%s): status %s, %d completions in the parent, want completed and 1", key, l.Label, l.Status, seen[key])
		}
		if !strings.Contains(l.Answer, "done part "+l.Label) {
			t.Errorf("child %s answered %q", l.Label, l.Answer)
		}
	}
}

// TestKillSubagentsChild is the process TestKill9WhileSubagentsRun kills: it prints its
// marker once the parent's yield is recorded and the three children run their tool.
func TestKillSubagentsChild(t *testing.T) {
	db := os.Getenv("REEF_KILL_SUBAGENTS_DB")
	if db == "" {
		t.Skip("run by TestKill9WhileSubagentsRun only")
	}
	var running atomic.Int32
	slow := &testTool{name: "slow", run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		running.Add(1)
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}}
	h := newHarness(t, harnessOpts{dbPath: db, script: fanOutScript(), extra: append(sessionsAndWeather(), slow)})
	h.say("9", "three parts, one report")
	waitFor(t, func() bool {
		if running.Load() < 3 {
			return false
		}
		yielded := false
		for _, e := range h.transcript("9") {
			yielded = yielded || e.Role == messages.RoleTool && e.ToolName == subagent.ToolYield
		}
		return yielded
	})
	fmt.Println("CHILDREN_RUNNING")
	time.Sleep(time.Minute) // the parent kills this process
}

// queuedScript: the parent spawns the children A, B and C one step after another (so their
// spawn order is A, B, C), then yields, and answers once no sub-agent is still running.
// Children call slow, then answer with their task; child answers what it is asked first
// (nil: nothing) and records the order in which the children's runs make model calls.
func queuedScript(child func(fakellm.Request)) *fakellm.Script {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			if child != nil {
				child(req)
			}
			if lastTool(req) == "slow" {
				return fakellm.Reply{Text: "done " + taskOf(req)}
			}
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case len(completions(req)) > 0:
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: fmt.Sprintf("final report from %d completions", len(completions(req)))}
		}
		spawned := 0
		for _, m := range req.Messages {
			if m.Role == messages.RoleTool && m.ToolName == subagent.ToolSpawn {
				spawned++
			}
		}
		if spawned == 3 {
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		}
		l := string(rune('A' + spawned))
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("s"+l, subagent.ToolSpawn, map[string]string{"task": "part " + l, "label": l})}}
	}
	return script
}

// TestSubagentQueuedAcrossRestart: with maxConcurrent 1, A runs and B and C wait, marked
// queued, when the gateway stops. After the start on the same store B and C are still marked
// queued while A (resumed) holds the slot; they start in spawn order as the slot frees, each
// ends with exactly one completion in the parent, no child's task runs twice, and the user
// gets one final answer.
func TestSubagentQueuedAcrossRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "reef.db")
	one := func(a *actors.Agent) { a.Subagents.MaxConcurrent = 1 }
	var mu sync.Mutex
	calls := map[string]int{} // task → model calls that opened its run (no tool result yet)
	opened := func(req fakellm.Request) {
		if lastTool(req) == "" {
			mu.Lock()
			calls[taskOf(req)]++
			mu.Unlock()
		}
	}
	slow, started, _ := heldTool("slow", "never") // A's tool runs until the gateway stops
	h := newHarness(t, harnessOpts{dbPath: db, script: queuedScript(opened), extra: append(sessionsAndWeather(), slow), agentHook: one})
	h.say("9", "three parts, one report")
	<-started
	status := func(h *harness) map[string]string {
		out := map[string]string{}
		for _, l := range links(t, h) {
			out[l.Label] = l.Status
		}
		return out
	}
	want := map[string]string{"A": messages.SubagentRunning, "B": messages.SubagentQueued, "C": messages.SubagentQueued}
	waitFor(t, func() bool { return maps.Equal(status(h), want) })
	waitFor(t, func() bool { return yielded(h, "9") })
	h.stop()

	var order []string // the children whose runs made model calls after the start, in order
	resumed, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	script := queuedScript(func(req fakellm.Request) {
		opened(req)
		task := taskOf(req)
		mu.Lock()
		if !slices.Contains(order, task) {
			order = append(order, task)
		}
		mu.Unlock()
		if task == "part A" {
			once.Do(func() { close(resumed) })
			<-release // A's resumed run holds the slot
		}
	})
	fast := &testTool{name: "slow", run: func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{Content: "fast now"}, nil }}
	h2 := newHarness(t, harnessOpts{dbPath: db, script: script, extra: append(sessionsAndWeather(), fast), agentHook: one})
	testutil.Receive(t, resumed)
	if got := status(h2); !maps.Equal(got, want) {
		t.Errorf("after the start, while A runs: %v, want %v", got, want)
	}
	h2.say("9", "/subagents list")
	if got := h2.reply().Text; !strings.Contains(got, "2. B — queued") || !strings.Contains(got, "3. C — queued") {
		t.Errorf("/subagents list after the start: %q", got)
	}
	close(release)
	if got := h2.reply().Text; got != "final report from 3 completions" {
		t.Fatalf("after the start the user got %q, want the final report", got)
	}
	noMoreReplies(t, h2)
	mu.Lock()
	if want := []string{"part A", "part B", "part C"}; !slices.Equal(order, want) {
		t.Errorf("after the start the children ran in the order %q, want %q (spawn order)", order, want)
	}
	for _, task := range []string{"part A", "part B", "part C"} {
		if calls[task] != 1 {
			t.Errorf("%s: its run was opened %d times, want once", task, calls[task])
		}
	}
	mu.Unlock()
	seen := map[string]int{}
	for _, c := range parentCompletions(h2, "9") {
		for _, l := range []string{"A", "B", "C"} {
			if strings.Contains(c, "label: "+l+"\n") {
				seen[l]++
			}
		}
	}
	for _, l := range links(t, h2) {
		if l.Status != messages.SubagentCompleted || l.Runs != 1 || seen[l.Label] != 1 {
			t.Errorf("child %s: status %s, %d runs, %d completions in the parent; want completed, 1, 1", l.Label, l.Status, l.Runs, seen[l.Label])
		}
		if got := childAnswers(t, h2, l.Label); len(got) != 1 || got[0] != "done part "+l.Label {
			t.Errorf("child %s answered %q, want once", l.Label, got)
		}
	}
}
