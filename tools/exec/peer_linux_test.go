package exec

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// orphan starts `sleep 300` through sh so that it is re-parented away from this process
// (init or the nearest subreaper above it) before it is looked at, with extra in its
// environment, and wrapped in argv prefix (e.g. unshare -U). It returns its pid.
func orphan(t *testing.T, extra []string, prefix ...string) int {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	inner := strings.Join(append(prefix, "sleep", "300"), " ")
	cmd := osexec.Command("/bin/sh", "-c", "( "+inner+" >/dev/null 2>&1 </dev/null & echo $! > "+pidFile+" ) &")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, extra...)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var pid int
	waitFor(t, "the orphan to start", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	waitFor(t, "the orphan to leave this process's tree", func() bool {
		ppid, err := parentOf(pid)
		return err == nil && ppid != os.Getpid() && ppid != cmd.Process.Pid && !strings.Contains(Started(pid), "started by reef")
	})
	// wait for sleep to be exec'd (by the prefix, or by the subshell forked for it): a process
	// in the middle of execve shows an empty /proc/<pid>/environ.
	waitFor(t, "the orphan to run sleep", func() bool { return procName(pid) == "sleep" })
	return pid
}

// TestStartedFindsExecsProcesses: the control socket's test of its peers refuses this
// process's descendants, processes that carry exec's marker or live in another user
// namespace, and serves everything else.
func TestStartedFindsExecsProcesses(t *testing.T) {
	if got := Started(os.Getpid()); got != "" {
		t.Errorf("Started(self) = %q, want \"\"", got)
	}
	child := osexec.Command("sleep", "300")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	if got := Started(child.Process.Pid); !strings.Contains(got, "started by reef") {
		t.Errorf("a child: Started = %q, want started by reef", got)
	}

	if got := Started(orphan(t, nil)); got != "" {
		t.Errorf("an unrelated process: Started = %q, want \"\"", got)
	}
	if got := Started(orphan(t, []string{MarkerEnv + "=abc"})); !strings.Contains(got, "exec tool") {
		t.Errorf("an orphan with the marker: Started = %q, want the exec tool named", got)
	}
	if err := osexec.Command("unshare", "-U", "true").Run(); err != nil {
		t.Logf("no unprivileged user namespaces here (%v): that case is not tested", err)
	} else if got := Started(orphan(t, nil, "unshare", "-U")); !strings.Contains(got, "user namespace") {
		t.Errorf("an orphan in another user namespace: Started = %q, want a user namespace named", got)
	}
	if got := Started(1 << 30); !strings.Contains(got, "cannot be read") {
		t.Errorf("a pid that does not exist: Started = %q, want a refusal", got)
	}
}
