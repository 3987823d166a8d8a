package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// idemTool is a test tool that declares itself safe to repeat.
type idemTool struct{ testTool }

func (*idemTool) Idempotent() {}

var _ tools.Idempotent = (*idemTool)(nil)

// appendLine appends line to path: the side effect whose repetitions the tests count.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(line + "\n")
	return err
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// toolOnceModel plays a model that asks for the same calls whenever it sees the same
// conversation: side("a"); then side("b") with peek; then it answers. A run redone from
// scratch after a crash therefore asks for side("a") again.
func toolOnceModel(req fakellm.Request) fakellm.Reply {
	results := 0
	for _, m := range req.Messages {
		if m.Role == messages.RoleTool {
			results++
		}
	}
	switch results {
	case 0:
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", "side", map[string]any{"v": "a"})}}
	case 1:
		return fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("s2", "side", map[string]any{"v": "b"}), call("p1", "peek", map[string]any{})}}
	}
	return fakellm.Reply{Text: "all done"}
}

// toolOnceTools are the side-effect tool (not idempotent) and the idempotent peek, each
// appending a line to a file in dir per run. hold, when set, makes side("b") and peek block
// after their side effect, and is called once both are blocked.
func toolOnceTools(dir string, hold func()) []tools.Tool {
	var wg sync.WaitGroup
	wg.Add(2)
	if hold != nil {
		go func() { wg.Wait(); hold() }()
	}
	block := func(ctx context.Context) {
		if hold != nil {
			wg.Done()
			<-ctx.Done()
		}
	}
	side := &testTool{name: "side", run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		var args struct{ V string }
		_ = json.Unmarshal(c.Args, &args)
		if err := appendLine(filepath.Join(dir, "side.log"), args.V); err != nil {
			return tools.Result{}, err
		}
		if args.V == "b" {
			block(ctx)
		}
		return tools.Result{Content: "side " + args.V + " done"}, nil
	}}
	peek := &idemTool{testTool{name: "peek", run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
		if err := appendLine(filepath.Join(dir, "peek.log"), "p"); err != nil {
			return tools.Result{}, err
		}
		block(ctx)
		return tools.Result{Content: "peeked"}, nil
	}}}
	return []tools.Tool{side, peek}
}

// TestToolSideEffectOnceAcrossKill9 kills reef (SIGKILL) while a step's calls run: the
// side-effect tool has acted, the idempotent one is running. After a restart the run goes on
// from where it was: the earlier step is not repeated, the interrupted side-effect call is
// not run again but answered "interrupted", the idempotent call is run again, and the user
// gets one answer.
func TestToolSideEffectOnceAcrossKill9(t *testing.T) {
	if os.Getenv("REEF_TOOLONCE_DIR") != "" {
		t.Skip("run by the parent test only")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "reef.db")
	killChildAt(t, "TestToolOnceChild", "REEF_TOOLONCE_DIR="+dir, "TOOLS_HELD")
	if got := readLines(t, filepath.Join(dir, "side.log")); strings.Join(got, ",") != "a,b" {
		t.Fatalf("side effects before the restart = %v, want [a b]", got)
	}

	script := fakellm.NewScript()
	script.Respond = toolOnceModel
	h := newHarness(t, harnessOpts{dbPath: db, script: script, extra: toolOnceTools(dir, nil)})
	if got := h.reply(); got.ChatID != "9" || got.Text != "all done" {
		t.Fatalf("after restart got %+v, want the answer in chat 9", got)
	}
	h.stop()
	select {
	case extra := <-h.ch.Sent:
		t.Fatalf("a second reply was sent: %+v", extra)
	default:
	}
	if got := readLines(t, filepath.Join(dir, "side.log")); strings.Join(got, ",") != "a,b" {
		t.Errorf("side effects after the restart = %v, want [a b]: each call at most once", got)
	}
	if got := readLines(t, filepath.Join(dir, "peek.log")); len(got) != 2 {
		t.Errorf("peek ran %d times, want 2: the idempotent call is run again", len(got))
	}
	reqs := script.Requests()
	if len(reqs) != 1 {
		t.Fatalf("provider called %d times after restart, want 1 (the run resumes)", len(reqs))
	}
	want := map[string]string{"s1": "side a done", "s2": "interrupted: reef restarted", "p1": "peeked"}
	for _, m := range reqs[0].Messages {
		if m.Role == messages.RoleTool && want[m.ToolCallID] != "" {
			if !strings.Contains(m.Content, want[m.ToolCallID]) {
				t.Errorf("result of %s = %q, want it to say %q", m.ToolCallID, m.Content, want[m.ToolCallID])
			}
			delete(want, m.ToolCallID)
		}
	}
	if len(want) > 0 {
		t.Errorf("request after restart lacks the results of %v", want)
	}

	store, err := bolt.Open(db, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var entries []persistence.Entry
	var started int
	store.View(func(r persistence.Reader) error {
		entries, _ = r.Messages(h.key("9"), 0)
		return r.Scan("runs/started", "", func(string, []byte) error { started++; return nil })
	})
	results := checkPairs(t, entries)
	if r := results["s2"]; !strings.HasPrefix(r.Content, "interrupted:") || !r.IsError {
		t.Errorf("stored result of s2 = %+v, want the interrupted note", r)
	}
	if started != 0 {
		t.Errorf("%d started records left after the run was recorded, want 0", started)
	}
}

// TestToolOnceChild is the process TestToolSideEffectOnceAcrossKill9 kills.
func TestToolOnceChild(t *testing.T) {
	dir := os.Getenv("REEF_TOOLONCE_DIR")
	if dir == "" {
		t.Skip("run by TestToolSideEffectOnceAcrossKill9 only")
	}
	script := fakellm.NewScript()
	script.Respond = toolOnceModel
	h := newHarness(t, harnessOpts{dbPath: filepath.Join(dir, "reef.db"), script: script,
		extra: toolOnceTools(dir, func() { fmt.Println("TOOLS_HELD") })})
	h.say("9", "do the two steps")
	time.Sleep(time.Minute) // the parent kills this process
}

// BenchmarkToolStep measures one run of one tool step (model → tool → model → answer) in
// one conversation on a durable bolt store, each op one answered message. "recorded" calls a
// tool that is not idempotent, so the step is written as started before the tool runs;
// "idempotent" skips that write. The difference is the latency the record adds to a step.
func BenchmarkToolStep(b *testing.B) {
	noop := func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{Content: "done"}, nil }
	for _, bc := range []struct {
		name string
		tool tools.Tool
	}{
		{"recorded", &testTool{name: "act", run: noop}},
		{"idempotent", &idemTool{testTool{name: "act", run: noop}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			script := fakellm.NewScript()
			script.KeepRequests = 16
			script.Respond = func(r fakellm.Request) fakellm.Reply {
				if last := r.Messages[len(r.Messages)-1]; last.Role == messages.RoleUser {
					return fakellm.Reply{ToolCalls: []messages.ToolCall{call("c1", "act", map[string]any{})}}
				}
				return fakellm.Reply{Text: "ok"}
			}
			h := newHarness(b, harnessOpts{script: script, extra: []tools.Tool{bc.tool}})
			c0, _, n0 := actors.StorageStats()
			b.ResetTimer()
			for range b.N {
				h.say("1", "hello")
				h.reply()
			}
			b.StopTimer()
			c1, _, n1 := actors.StorageStats()
			b.ReportMetric(float64(c1-c0)/float64(b.N), "commits/op")
			b.ReportMetric(float64(n1-n0)/1e6/float64(max(1, c1-c0)), "ms/commit")
			h.stop()
		})
	}
}

// startedStore counts the started records written and can refuse them.
type startedStore struct {
	persistence.Store
	fail bool
	puts atomic.Int32
}

func (s *startedStore) Update(fn func(persistence.Tx) error) error {
	return s.Store.Update(func(tx persistence.Tx) error { return fn(&startedTx{Tx: tx, store: s}) })
}

type startedTx struct {
	persistence.Tx
	store *startedStore
}

func (t *startedTx) Put(bucket, key string, value []byte) error {
	if bucket == "runs/started" {
		t.store.puts.Add(1)
		if t.store.fail {
			return errors.New("disk says no")
		}
	}
	return t.Tx.Put(bucket, key, value)
}

// TestToolNotRunWhenStartNotRecorded: when the started record cannot be written, the
// side-effect tool does not run; the model is told and the user gets an answer. A step whose
// calls are all idempotent writes no record.
func TestToolNotRunWhenStartNotRecorded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tool     string
		fail     bool
		wantRuns int
		wantPuts int32
		want     string
	}{
		{"refused", "act", true, 0, 1, "not run: reef could not save"},
		{"recorded", "act", false, 1, 1, "done"},
		{"idempotent", "look", true, 1, 0, "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int32
			run := func(context.Context, tools.Call) (tools.Result, error) {
				runs.Add(1)
				return tools.Result{Content: "done"}, nil
			}
			script := fakellm.NewScript(fakellm.Reply{ToolCalls: []messages.ToolCall{call("c1", tc.tool, map[string]any{})}},
				fakellm.Reply{Text: "answered"})
			store := &startedStore{fail: tc.fail}
			h := newHarness(t, harnessOpts{script: script,
				extra:     []tools.Tool{&testTool{name: "act", run: run}, &idemTool{testTool{name: "look", run: run}}},
				wrapStore: func(s persistence.Store) persistence.Store { store.Store = s; return store }})
			h.say("1", "go")
			if got := h.reply(); got.Text != "answered" {
				t.Fatalf("reply = %q, want the model's answer", got.Text)
			}
			if got := int(runs.Load()); got != tc.wantRuns {
				t.Errorf("tool ran %d times, want %d", got, tc.wantRuns)
			}
			if got := store.puts.Load(); got != tc.wantPuts {
				t.Errorf("%d started records written, want %d", got, tc.wantPuts)
			}
			reqs := script.Requests()
			if len(reqs) != 2 || !requestHas(reqs[1], tc.want) {
				t.Errorf("the model was not given the result %q", tc.want)
			}
		})
	}
}
