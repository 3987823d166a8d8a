package exec

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBackgroundDaemonsDie: /stop, and shutdown, kill what a background command started,
// also a double fork out of its session.
func TestBackgroundDaemonsDie(t *testing.T) {
	setsid := lookSetsid(t)
	for _, how := range []string{"stop", "shutdown", "timeout"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			r := newBGRig(t, ProcessConfig{})
			kv := []any{"command", setsid + ` sh -c '(sleep 300 & echo $! > daemon.pid) &' ; exec sleep 300`, "background", true}
			if how == "timeout" {
				kv = append(kv, "timeout", 20) // long enough for a loaded machine to start the daemon
			}
			idOf(t, r.call(t, r.exec, "s1", kv...))
			pid := readPidWithin(t, filepath.Join(r.ws, "daemon.pid"), time.Minute)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			switch how {
			case "stop":
				r.procs.KillSession("s1", true)
			case "shutdown":
				if err := r.procs.Close(30 * time.Second); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(60 * time.Second)
			for !gone(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the double-forked daemon %d survived %s", pid, how)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if how == "timeout" {
				deadline := time.Now().Add(time.Minute)
				for len(r.reported()) == 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if len(r.reported()) != 1 {
					t.Fatalf("reported %d times, want once", len(r.reported()))
				}
				if e := r.reported()[0]; !strings.Contains(e.Status, "timed out after 20s") {
					t.Errorf("report: %+v", e)
				}
			}
		})
	}
}

func lookSetsid(t *testing.T) string {
	p, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("setsid is not installed")
	}
	return p
}
