package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/tools"
)

// bgRig is an exec tool and a process tool over one Processes, with the exits it reports.
type bgRig struct {
	ws      string
	exec    tools.Tool
	process tools.Tool
	procs   *Processes
	mu      sync.Mutex
	exits   []Exited
}

func newBGRig(t *testing.T, pc ProcessConfig) *bgRig {
	t.Helper()
	r := &bgRig{ws: workspace(t), procs: NewProcesses(pc)}
	r.procs.SetNotify(func(e Exited) { r.mu.Lock(); r.exits = append(r.exits, e); r.mu.Unlock() })
	r.exec = New(Config{Helper: helper(), Processes: r.procs, MaxTimeout: 5 * time.Minute})
	r.process = NewProcess(r.procs, 0)
	t.Cleanup(func() {
		if err := r.procs.Close(30 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return r
}

// call runs tool in session and fails the test if it has not returned within a minute.
func (r *bgRig) call(t *testing.T, tool tools.Tool, session string, kv ...any) tools.Result {
	t.Helper()
	done := make(chan tools.Result, 1)
	go func() {
		done <- tools.Run(context.Background(), tool, tools.Call{ID: "c", Args: args(kv...),
			Env: tools.Env{Workspace: r.ws, SessionKey: session}})
	}()
	select {
	case res := <-done:
		return res
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return within a minute", tool.Spec().Name)
		return tools.Result{}
	}
}

func (r *bgRig) reported() []Exited {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Exited(nil), r.exits...)
}

var procID = regexp.MustCompile(`process (p\d+)`)

func idOf(t *testing.T, res tools.Result) string {
	t.Helper()
	m := procID.FindStringSubmatch(res.Content)
	if res.IsError || m == nil {
		t.Fatalf("no process id in %q (error %v)", res.Content, res.IsError)
	}
	return m[1]
}

// TestBackgroundSleepPollKill: the case: sleep 30 in the background, poll, kill;
// the command's whole tree dies and a killed process is not reported to the session.
func TestBackgroundSleepPollKill(t *testing.T) {
	r := newBGRig(t, ProcessConfig{})
	res := r.call(t, r.exec, "s1", "command", "echo $$ > sleep.pid; echo started; exec sleep 30", "background", true)
	id := idOf(t, res)
	if !strings.Contains(res.Content, "Started in the background") {
		t.Errorf("start: %q", res.Content)
	}
	pid := readPidWithin(t, filepath.Join(r.ws, "sleep.pid"), time.Minute)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })

	if got := r.call(t, r.process, "s1", "action", "list").Content; !strings.Contains(got, id) || !strings.Contains(got, "running for") || !strings.Contains(got, "sleep 30") {
		t.Errorf("list: %q", got)
	}
	var polled string
	waitLong(t, "the first output", func() bool {
		polled += r.call(t, r.process, "s1", "action", "poll", "id", id).Content
		return strings.Contains(polled, "started\n")
	})
	if !strings.Contains(polled, "running for") {
		t.Errorf("poll: %q, want it still running", polled)
	}
	if got := r.call(t, r.process, "s1", "action", "poll", "id", id).Content; !strings.HasPrefix(got, "(no new output)") {
		t.Errorf("second poll: %q, want no new output", got)
	}
	if got := r.call(t, r.process, "s2", "action", "poll", "id", id); !got.IsError {
		t.Errorf("another session polled it: %q", got.Content)
	}
	killed := r.call(t, r.process, "s1", "action", "kill", "id", id)
	if killed.IsError || !strings.Contains(killed.Content, "killed by the agent") {
		t.Errorf("kill: %q", killed.Content)
	}
	waitLong(t, "sleep to die", func() bool { return gone(pid) })
	if got := r.call(t, r.process, "s1", "action", "list").Content; !strings.Contains(got, "ended after") {
		t.Errorf("list after kill: %q", got)
	}
	if got := r.call(t, r.process, "s1", "action", "clear", "id", id).Content; !strings.Contains(got, "forgotten") {
		t.Errorf("clear: %q", got)
	}
	if got := r.call(t, r.process, "s1", "action", "list").Content; !strings.HasPrefix(got, "No background processes") {
		t.Errorf("list after clear: %q", got)
	}
	if e := r.reported(); len(e) != 0 {
		t.Errorf("a killed process was reported: %+v", e)
	}
}

// TestBackgroundNotifiesOnce: a background command that ends by itself is reported to its
// session exactly once, with its status and the end of its output.
func TestBackgroundNotifiesOnce(t *testing.T) {
	r := newBGRig(t, ProcessConfig{})
	id := idOf(t, r.call(t, r.exec, "s1", "command", "echo one; sleep 0.2; echo two; exit 3", "background", true))
	waitLong(t, "the exit report", func() bool { return len(r.reported()) > 0 })
	got := r.call(t, r.process, "s1", "action", "poll", "id", id, "timeout", 30000).Content
	if !strings.Contains(got, "one\ntwo\n") || !strings.Contains(got, "exit code 3") {
		t.Errorf("poll: %q", got)
	}
	if err := r.procs.Close(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	e := r.reported()
	if len(e) != 1 {
		t.Fatalf("reported %d times, want once: %+v", len(e), e)
	}
	if e[0].SessionKey != "s1" || e[0].ID != id || e[0].Status != "exit code 3" || !e[0].Failed || !strings.Contains(e[0].Tail, "two") {
		t.Errorf("report: %+v", e[0])
	}
}

// TestYield: a command that ends within yieldMs answers like a plain call and leaves nothing
// behind; one still running goes on in the background with its output so far.
func TestYield(t *testing.T) {
	r := newBGRig(t, ProcessConfig{})
	quick := r.call(t, r.exec, "s1", "command", "echo quick", "yieldMs", 30000)
	if quick.Content != "quick\nexit code 0" || quick.IsError {
		t.Errorf("quick: %q", quick.Content)
	}
	slow := r.call(t, r.exec, "s1", "command", "echo begun; exec sleep 30", "yieldMs", 300)
	id := idOf(t, slow)
	if !strings.Contains(slow.Content, "Still running after 300ms") {
		t.Errorf("slow: %q", slow.Content)
	}
	if list := r.call(t, r.process, "s1", "action", "list").Content; strings.Count(list, "\n") != 0 || !strings.Contains(list, id) {
		t.Errorf("list: %q, want only %s", list, id)
	}
	if n := r.procs.KillSession("s1", true); n != 1 {
		t.Errorf("KillSession killed %d, want 1", n)
	}
	got := r.call(t, r.process, "s1", "action", "poll", "id", id, "timeout", 30000).Content
	if !strings.Contains(got, "killed by /stop") {
		t.Errorf("poll after /stop: %q", got)
	}
	if e := r.reported(); len(e) != 0 {
		t.Errorf("reported: %+v", e)
	}
}

// TestBackgroundStdin: write sends input; eof closes it.
func TestBackgroundStdin(t *testing.T) {
	r := newBGRig(t, ProcessConfig{})
	id := idOf(t, r.call(t, r.exec, "s1", "command", `read a; echo "got $a"; cat; echo end`, "background", true))
	if res := r.call(t, r.process, "s1", "action", "write", "id", id, "data", "hello\nrest\n", "eof", true); res.IsError {
		t.Fatalf("write: %q", res.Content)
	}
	got := r.call(t, r.process, "s1", "action", "poll", "id", id, "timeout", 30000).Content
	if !strings.Contains(got, "got hello\nrest\nend\n") || !strings.Contains(got, "exit code 0") {
		t.Errorf("poll: %q", got)
	}
	if res := r.call(t, r.process, "s1", "action", "write", "id", id, "data", "more"); !res.IsError {
		t.Errorf("write after the end: %q", res.Content)
	}
}

func TestBackgroundLimits(t *testing.T) {
	r := newBGRig(t, ProcessConfig{MaxRunning: 1, MaxTotal: 2})
	idOf(t, r.call(t, r.exec, "s1", "command", "exec sleep 30", "background", true))
	if res := r.call(t, r.exec, "s1", "command", "exec sleep 30", "background", true); !res.IsError || !strings.Contains(res.Content, "tools.exec.background.maxRunning: 1") {
		t.Errorf("second in s1: %q", res.Content)
	}
	idOf(t, r.call(t, r.exec, "s2", "command", "exec sleep 30", "background", true))
	if res := r.call(t, r.exec, "s3", "command", "exec sleep 30", "background", true); !res.IsError || !strings.Contains(res.Content, "tools.exec.background.maxTotal: 2") {
		t.Errorf("third in all: %q", res.Content)
	}
	if res := r.call(t, r.exec, "", "command", "echo x", "background", true); !res.IsError {
		t.Errorf("no session: %q", res.Content)
	}
	plain := New(Config{Helper: helper()})
	if res := r.call(t, plain, "s1", "command", "echo x", "background", true); !res.IsError {
		t.Errorf("without Processes: %q", res.Content)
	}
	if strings.Contains(string(plain.Spec().Parameters), "background") {
		t.Errorf("exec without Processes offers background: %s", plain.Spec().Parameters)
	}
}

func TestProcessLog(t *testing.T) {
	r := newBGRig(t, ProcessConfig{})
	id := idOf(t, r.call(t, r.exec, "s1", "command", "seq 1 500", "background", true))
	r.call(t, r.process, "s1", "action", "poll", "id", id, "timeout", 30000)
	got := r.call(t, r.process, "s1", "action", "log", "id", id, "offset", 10, "limit", 3).Content
	if !strings.HasSuffix(got, ":\n11\n12\n13\n") || !strings.Contains(got, "Lines 10-12 of 500") {
		t.Errorf("log offset: %q", got)
	}
	got = r.call(t, r.process, "s1", "action", "log", "id", id).Content
	if !strings.Contains(got, "Lines 300-499 of 500") || !strings.HasSuffix(got, ":\n"+seq(301, 500)) {
		t.Errorf("log tail: %q", got)
	}
	if res := r.call(t, r.process, "s1", "action", "bogus", "id", id); !res.IsError {
		t.Errorf("bogus action: %q", res.Content)
	}
	if res := r.call(t, r.process, "s1", "action", "log", "id", "p999"); !res.IsError {
		t.Errorf("unknown id: %q", res.Content)
	}
}

func seq(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestRing(t *testing.T) {
	r := newRing(4)
	r.Write([]byte("ab"))
	if d, dropped, next := r.since(0); string(d) != "ab" || dropped != 0 || next != 2 {
		t.Errorf("got %q %d %d", d, dropped, next)
	}
	r.Write([]byte("cdefgh"))
	if d, dropped, next := r.since(1); string(d) != "efgh" || dropped != 3 || next != 8 {
		t.Errorf("got %q %d %d", d, dropped, next)
	}
	for _, c := range "ijklmnop" {
		r.Write([]byte(string(c)))
	}
	if d, dropped, next := r.since(8); string(d) != "mnop" || dropped != 4 || next != 16 {
		t.Errorf("got %q %d %d", d, dropped, next)
	}
	if d, _, _ := r.since(14); string(d) != "op" {
		t.Errorf("got %q", d)
	}
}

// Finished processes are kept for KeepFinished, and at most MaxKept per session.
func TestProcessesPrune(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newBGRig(t, ProcessConfig{MaxKept: 2, KeepFinished: time.Hour, Now: clock})
	for i := range 3 {
		res := r.call(t, r.exec, "s1", "command", fmt.Sprintf("echo %d", i), "background", true)
		r.call(t, r.process, "s1", "action", "poll", "id", idOf(t, res), "timeout", 30000)
	}
	if got := r.call(t, r.process, "s1", "action", "list").Content; strings.Contains(got, "p1 ") || !strings.Contains(got, "p3 ") {
		t.Errorf("list keeps %q, want p2 and p3", got)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if got := r.call(t, r.process, "s1", "action", "list").Content; !strings.HasPrefix(got, "No background processes") {
		t.Errorf("after two hours: %q", got)
	}
}

// readPidWithin polls for a pid the command wrote, up to limit (a loaded machine starts the
// sandboxed command slowly).
func readPidWithin(t *testing.T, path string, limit time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after %s", filepath.Base(path), limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLong polls cond for up to a minute: background commands start slowly on a loaded machine.
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
