package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/tools"
)

// TestExecDaemonsDieWithTheCall: processes that leave the process group and the session
// (setsid, nohup ... &) die with the call, after a normal exit and on timeout.
func TestExecDaemonsDieWithTheCall(t *testing.T) {
	setsid, err := osexec.LookPath("setsid")
	if err != nil {
		t.Skip("setsid is not installed")
	}
	nohup, err := osexec.LookPath("nohup")
	if err != nil {
		t.Skip("nohup is not installed")
	}
	daemons := map[string]string{
		"setsid": setsid + ` sh -c 'echo $$ > daemon.pid; exec sleep 300' >/dev/null 2>&1 &`,
		"nohup":  nohup + ` sh -c 'echo $$ > daemon.pid; exec sleep 300' >/dev/null 2>&1 &`,
		// A double fork out of a new session, still holding the output pipe.
		"setsid double fork": setsid + ` sh -c '(sleep 300 & echo $! > daemon.pid) &' &`,
	}
	for _, sandbox := range []string{SandboxOff, SandboxAuto} {
		for name, daemon := range daemons {
			for _, ending := range []string{"exit", "timeout"} {
				t.Run(sandbox+" "+name+" "+ending, func(t *testing.T) {
					t.Parallel()
					ws := workspace(t)
					command := daemon + " while [ ! -s daemon.pid ]; do sleep 0.01; done; echo started"
					want := "started\nexit code 0"
					if ending == "timeout" {
						// Long enough for a loaded machine to start the daemon first.
						command += "; sleep 300"
						want = "started\ntimed out after 8s; every process it started was killed"
					}
					tool := New(Config{Helper: helper(), Sandbox: sandbox, MaxTimeout: 8 * time.Second})
					res := run(t, context.Background(), tool, ws, args("command", command), 60*time.Second)
					pid := readPid(t, filepath.Join(ws, "daemon.pid"))
					t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
					if res.Content != want {
						t.Errorf("got %q, want %q", res.Content, want)
					}
					waitFor(t, "the daemon to die", func() bool { return gone(pid) })
				})
			}
		}
	}
}

// limitsOf parses /proc/<pid>/limits into soft limits by name.
func limitsOf(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(line, "Max ") {
			continue
		}
		// "Max cpu time  7  7  seconds": the name runs to the first numeric or unlimited field.
		for i, w := range f {
			if w == "unlimited" || (w[0] >= '0' && w[0] <= '9') {
				out[strings.Join(f[:i], " ")] = w
				break
			}
		}
	}
	return out
}

func TestExecLimitsAreSet(t *testing.T) {
	ws := workspace(t)
	lim := Limits{Processes: 50, FileSize: 1 << 20, CPUSeconds: 7, Memory: 3 << 30}
	tool := New(Config{Helper: helper(), Limits: lim})
	res := run(t, context.Background(), tool, ws, args("command", "cat /proc/self/limits"), 20*time.Second)
	got := limitsOf(res.Content)
	want := map[string]string{"Max file size": "1048576", "Max cpu time": "7", "Max address space": strconv.Itoa(3 << 30)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q\n%s", k, got[k], v, res.Content)
		}
	}
	// The limit is the user's processes (which other programs change) plus 50.
	if n, err := strconv.Atoi(got["Max processes"]); err != nil || n < 50 {
		t.Errorf("Max processes = %q, want the user's processes plus 50\n%s", got["Max processes"], res.Content)
	}

	off := New(Config{Helper: helper(), Sandbox: SandboxOff, Limits: lim})
	res = run(t, context.Background(), off, ws, args("command", "cat /proc/self/limits"), 20*time.Second)
	if got := limitsOf(res.Content); got["Max cpu time"] == "7" {
		t.Errorf("sandbox off still set the limits:\n%s", res.Content)
	}
}

// TestExecFileSizeLimit: RLIMIT_FSIZE holds even for root.
func TestExecFileSizeLimit(t *testing.T) {
	ws := workspace(t)
	tool := New(Config{Helper: helper(), Limits: Limits{FileSize: 1 << 20}})
	res := run(t, context.Background(), tool, ws, args("command", "head -c 3000000 /dev/zero > big"), 20*time.Second)
	if !res.IsError {
		t.Errorf("writing 3 MB under a 1 MB limit succeeded: %q", res.Content)
	}
	if st, err := os.Stat(filepath.Join(ws, "big")); err != nil || st.Size() > 1<<20 {
		t.Errorf("big: %v, size %d; want at most 1 MiB", err, st.Size())
	}
}

// nobodyUID is the unprivileged user tests switch to when they run as root.
const nobodyUID = 65534

// asNonRoot returns the SysProcAttr and a copy of this test binary that a non-root user can
// run: as root, the credentials of nobody and a copy in a world-readable folder.
func asNonRoot(t *testing.T) (*syscall.SysProcAttr, string, string) {
	t.Helper()
	attr := &syscall.SysProcAttr{Setpgid: true}
	if os.Getuid() != 0 {
		return attr, os.Args[0], workspace(t)
	}
	attr.Credential = &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}
	bin := testutil.WorldExecutableCopy(t)
	dir := filepath.Dir(bin)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ws, 0o777)
	return attr, bin, ws
}

// TestExecProcessLimitStopsForkLoop runs a fork loop through the helper as a non-root user
// (RLIMIT_NPROC does not bind root): it gets a handful of processes, not a hundred, and the
// test process goes on starting processes.
func TestExecProcessLimitStopsForkLoop(t *testing.T) {
	attr, bin, ws := asNonRoot(t)
	loop := `i=0; while [ $i -lt 100 ]; do sleep 30 & echo started; i=$((i+1)); done`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, bin, "exec-sandbox", "-level", "rlimits", "-nproc", "10", "--", "/bin/sh", "-c", loop)
	cmd.Dir, cmd.SysProcAttr = ws, attr
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	start := time.Now()
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the fork loop was not stopped: %s", out)
	}
	t.Logf("%s in %v", strings.TrimSpace(string(out)), time.Since(start))
	uid := os.Getuid()
	if attr.Credential != nil {
		uid = int(attr.Credential.Uid)
	}
	if attr.Credential != nil {
		// Only the loop ran as nobody; after the call none of its processes may be left.
		waitFor(t, "nobody's processes to be gone", func() bool { return userTasks(uid) == 0 })
	}
	// The limit is the user's tasks (the helper's threads among them) plus 10: far fewer than
	// 100 sleeps can have started.
	started := strings.Count(string(out), "started")
	if !strings.Contains(strings.ToLower(string(out)), "fork") || started >= 100 ||
		(attr.Credential != nil && started > 20) {
		t.Errorf("%d sleeps started in a fork loop limited to 10 more processes; output %q", started, out)
	}
	if err := osexec.Command("true").Run(); err != nil {
		t.Errorf("the test process cannot start a process after the fork loop: %v", err)
	}
}

func TestExecLandlockConfinesWrites(t *testing.T) {
	abi := LandlockABI()
	if abi < 1 {
		t.Skip("this kernel has no Landlock (see /sys/kernel/security/lsm)")
	}
	ws, tmp, outside := workspace(t), workspace(t), workspace(t)
	tool := New(Config{Helper: helper(), Sandbox: SandboxLandlock, TempDirs: []string{tmp}})
	command := fmt.Sprintf("echo a > in-ws && echo b > %s/t && echo c > /dev/null && echo ok; "+
		"echo d > %s/x; mkdir %s/d; rm -f %s/keep; echo done", tmp, outside, outside, outside)
	if err := os.WriteFile(filepath.Join(outside, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, context.Background(), tool, ws, args("command", command), 20*time.Second)
	if !strings.HasPrefix(res.Content, "ok\n") || strings.Count(res.Content, "Permission denied") < 3 {
		t.Errorf("got %q, want writes in the workspace and temp dir and three refusals outside", res.Content)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "keep" {
		t.Errorf("the folder outside was changed: %v", entries)
	}
	for _, f := range []string{filepath.Join(ws, "in-ws"), filepath.Join(tmp, "t")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a write allowed by the sandbox failed: %v", err)
		}
	}
	if abi >= 6 {
		res := run(t, context.Background(), tool, ws, args("command", "kill -KILL $PPID; echo rc=$?"), 20*time.Second)
		if !strings.Contains(res.Content, "rc=1") || !strings.Contains(res.Content, "exit code 0") {
			t.Errorf("the command could signal its supervisor: %q", res.Content)
		}
	}

	off := New(Config{Helper: helper(), Sandbox: SandboxOff})
	res = run(t, context.Background(), off, ws, args("command", "echo d > "+outside+"/x"), 20*time.Second)
	if res.IsError {
		t.Errorf("sandbox off refused a write: %q", res.Content)
	}
}

func TestExecBwrap(t *testing.T) {
	if err := osexec.Command("bwrap", "--ro-bind", "/", "/", "true").Run(); err != nil {
		t.Skipf("bwrap cannot run here (not installed, or no user namespaces): %v", err)
	}
	ws, tmp, outside := workspace(t), workspace(t), workspace(t)
	tool := New(Config{Helper: helper(), Sandbox: SandboxBwrap, TempDirs: []string{tmp}})
	command := fmt.Sprintf("echo a > in-ws && echo b > %s/t && echo ok; echo d > %s/x; echo pid $$", tmp, outside)
	res := run(t, context.Background(), tool, ws, args("command", command), 20*time.Second)
	if !strings.HasPrefix(res.Content, "ok\n") || !strings.Contains(res.Content, "Read-only file system") {
		t.Errorf("got %q, want writes in the workspace and temp dir and a refusal outside", res.Content)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("bwrap let the command write outside the workspace")
	}
}

// TestExecRefusesMissingSandbox: a level that cannot run here refuses commands rather than
// running them unconfined.
func TestExecRefusesMissingSandbox(t *testing.T) {
	ws := workspace(t)
	marker := filepath.Join(ws, "ran")
	t.Run("bwrap not installed", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		res := run(t, context.Background(), New(Config{Helper: helper(), Sandbox: SandboxBwrap}), ws,
			args("command", "/bin/touch "+marker), 20*time.Second)
		if !res.IsError || !strings.Contains(res.Content, "bwrap is not installed") {
			t.Errorf("got %q, want a refusal", res.Content)
		}
	})
	t.Run("no landlock", func(t *testing.T) {
		if LandlockABI() > 0 {
			t.Skip("this kernel has Landlock")
		}
		res := run(t, context.Background(), New(Config{Helper: helper(), Sandbox: SandboxLandlock}), ws,
			args("command", "/bin/touch "+marker), 20*time.Second)
		if !res.IsError || !strings.Contains(res.Content, "no Landlock") {
			t.Errorf("got %q, want a refusal", res.Content)
		}
	})
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused command ran")
	}
}

// TestExecLandlockWholeWorkspace: a call in a subfolder may still write anywhere in the workspace.
func TestExecLandlockWholeWorkspace(t *testing.T) {
	if LandlockABI() < 1 {
		t.Skip("this kernel has no Landlock")
	}
	ws := workspace(t)
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tool := New(Config{Helper: helper(), Sandbox: SandboxLandlock, TempDirs: []string{}})
	res := run(t, context.Background(), tool, ws, args("command", "echo x > ../top", "workdir", "sub"), 20*time.Second)
	if res.IsError {
		t.Errorf("writing in the workspace from a subfolder failed: %q", res.Content)
	}
}

// TestExecSweepsWhatAKilledSupervisorLeft (#39 item 13): with the sandbox off a command can
// kill its own supervisor; the daemon it started with setsid must not survive, and exec must
// not claim a cleanup it did not see. Reef's own sweep (process group and marker) finds it,
// for a call and for a background process.
func TestExecSweepsWhatAKilledSupervisorLeft(t *testing.T) {
	setsid, err := osexec.LookPath("setsid")
	if err != nil {
		t.Skip("setsid is not installed")
	}
	command := setsid + ` sh -c 'echo $$ > daemon.pid; exec sleep 300' >/dev/null 2>&1 &
while [ ! -s daemon.pid ]; do sleep 0.01; done; kill -KILL $PPID; sleep 300`
	check := func(t *testing.T, ws, status string) {
		t.Helper()
		pid := readPid(t, filepath.Join(ws, "daemon.pid"))
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		t.Logf("exec said: %q", status)
		waitFor(t, "the daemon to die", func() bool { return gone(pid) })
		if strings.Contains(status, "every process it started was killed") || !strings.Contains(status, "reef found ") || strings.Contains(status, "reef found 0") {
			t.Errorf("got %q, want reef's own sweep reported, not the supervisor's cleanup", status)
		}
	}
	t.Run("call", func(t *testing.T) {
		ws := workspace(t)
		tool := New(Config{Helper: helper(), Sandbox: SandboxOff})
		res := run(t, context.Background(), tool, ws, args("command", command), 60*time.Second)
		check(t, ws, res.Content)
	})
	t.Run("background", func(t *testing.T) {
		procs := NewProcesses(ProcessConfig{})
		exits := make(chan Exited, 1)
		procs.SetNotify(func(e Exited) { exits <- e })
		t.Cleanup(func() { procs.Close(30 * time.Second) })
		ws := workspace(t)
		tool := New(Config{Helper: helper(), Sandbox: SandboxOff, Processes: procs})
		res := tools.Run(context.Background(), tool, tools.Call{ID: "c", Args: args("command", command, "background", true),
			Env: tools.Env{Workspace: ws, SessionKey: "s"}})
		if res.IsError {
			t.Fatalf("background start: %q", res.Content)
		}
		select {
		case e := <-exits:
			check(t, ws, e.Status)
		case <-time.After(60 * time.Second):
			t.Fatal("the background process's end was never reported")
		}
	})
}
