package exec

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// dialUnix connects to the unix socket path and prints what the server says.
func dialUnix(path string) int {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	fmt.Print(string(b))
	return 0
}

// fakeState is a reef data dir with canaries in its files and a control socket that, like
// reef's, refuses peers that exec.Started names (and says SERVED to others).
func fakeState(t *testing.T, root string) string {
	t.Helper()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(filepath.Join(data, "backups"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"reef.db": "CANARY-DB", "gateway-token": "CANARY-TOKEN", "backups/b1.tar": "CANARY-BACKUP", "backups/CANARY-LISTED": ""} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(root, 0o755)
	ln, err := net.Listen("unix", filepath.Join(data, "reef.sock"))
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(data, "reef.sock"), 0o777)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			raw, _ := c.(*net.UnixConn).SyscallConn()
			var cred *unix.Ucred
			raw.Control(func(fd uintptr) { cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
			if why := Started(int(cred.Pid)); why != "" {
				fmt.Fprintf(c, "REFUSED: %s\n", why)
			} else {
				fmt.Fprintln(c, "SERVED")
			}
			c.Close()
		}
	}()
	return data
}

// probeScript tries every way to reef's state: the files by their path and through
// /proc/<pid>/root of a process outside the command's namespaces (this test process), the
// backups folder, and the control socket both ways.
func probeScript(data, bin string) string {
	via := fmt.Sprintf("/proc/%d/root%s", os.Getpid(), data)
	var b strings.Builder
	for i, d := range []string{data, via} {
		if i == 1 {
			b.WriteString("echo =====; ")
		}
		fmt.Fprintf(&b, "cat %s/reef.db %s/gateway-token %s/backups/b1.tar 2>&1; ls %s/backups 2>&1; ", d, d, d, d)
		fmt.Fprintf(&b, "%s dial-unix %s/reef.sock 2>&1; ", bin, d)
	}
	return b.String() + "echo probed"
}

// TestExecCannotReachReefsState: a command tries reef's database, gateway token, backups and
// control socket. Whatever sandbox reef falls back to, the socket does not serve it; with
// Landlock, the namespace or both nothing of the data dir can be read, by any path; with the
// sandbox off everything but the socket is open (the control, which shows the test can see
// what it guards).
func TestExecCannotReachReefsState(t *testing.T) {
	if LandlockABI() < 1 {
		t.Skip("this kernel has no Landlock")
	}
	userns := osexec.Command("unshare", "-U", "true").Run() == nil
	home := workspace(t)
	data := fakeState(t, home)
	ws := filepath.Join(home, "workspace")
	os.Mkdir(ws, 0o755)
	tmp := workspace(t)
	script := probeScript(data, os.Args[0])
	canaries := []string{"CANARY-DB", "CANARY-TOKEN", "CANARY-BACKUP", "CANARY-LISTED"}

	cases := []struct {
		name      string
		cfg       Config
		level     string
		needNS    bool
		needBwrap bool
		viaProc   bool // canaries readable through /proc/<pid>/root
		readable  bool // canaries readable by their path
		listed    bool // the names in the data dir can be listed by its path
	}{
		{name: "landlock and namespace", cfg: Config{Sandbox: SandboxLandlock}, needNS: true},
		{name: "landlock alone", cfg: Config{Sandbox: SandboxLandlock, noNamespace: true}, listed: true},
		{name: "namespace alone (no Landlock)", level: "rlimits", needNS: true},
		{name: "bwrap", cfg: Config{Sandbox: SandboxBwrap}, needBwrap: true},
		{name: "off", cfg: Config{Sandbox: SandboxOff}, viaProc: true, readable: true, listed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.needNS && !userns {
				t.Skip("no unprivileged user namespaces here")
			}
			if c.needBwrap && osexec.Command("bwrap", "--ro-bind", "/", "/", "true").Run() != nil {
				t.Skip("bwrap cannot run here")
			}
			cfg := c.cfg
			cfg.Helper, cfg.TempDirs, cfg.Hidden = helper(), []string{tmp}, []string{data}
			tool := New(cfg).(*Exec)
			if c.level != "" {
				tool.level = Level{Mode: c.level}
			}
			res := run(t, context.Background(), tool, ws, args("command", script), 60*time.Second)
			out := res.Content
			if !strings.Contains(out, "probed") {
				t.Fatalf("the probe did not run: %q", out)
			}
			if strings.Contains(out, "SERVED") || strings.Count(out, "REFUSED") < 1 && strings.Count(out, "dial:") < 2 {
				t.Errorf("the control socket served the command, or was not tried:\n%s", out)
			}
			direct, proc, _ := strings.Cut(out, "=====")
			for _, k := range canaries {
				want := c.readable || (k == "CANARY-LISTED" && c.listed)
				if got := strings.Contains(direct, k); got != want {
					t.Errorf("%s by its path: readable %v, want %v:\n%s", k, got, want, out)
				}
				if got := strings.Contains(proc, k); got != c.viaProc {
					t.Errorf("%s through /proc/<pid>/root: readable %v, want %v:\n%s", k, got, c.viaProc, out)
				}
			}
		})
	}
}

// TestExecHidesStateAsUnprivilegedUser: the same probe as TestExecCannotReachReefsState,
// run by the helper as a user that is not root (nobody, when the tests run as root): the
// namespace needs no privilege, and the state stays out of reach.
func TestExecHidesStateAsUnprivilegedUser(t *testing.T) {
	if LandlockABI() < 1 {
		t.Skip("this kernel has no Landlock")
	}
	attr, bin, ws := asNonRoot(t)
	home := filepath.Dir(ws)
	data := fakeState(t, home)
	for _, mode := range []string{SandboxLandlock, "rlimits", "landlock without namespace"} {
		t.Run(mode, func(t *testing.T) {
			level, ns := mode, true
			if mode == "landlock without namespace" {
				level, ns = SandboxLandlock, false
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			argv := helperArgs(level, Limits{}.withDefaults(), []string{ws}, []string{data}, "/bin/sh", "-c", probeScript(data, bin))
			if !ns {
				argv = append([]string{"-userns=false"}, argv...)
			}
			cmd := osexec.CommandContext(ctx, bin, append([]string{"exec-sandbox"}, argv...)...)
			cmd.Dir, cmd.SysProcAttr = ws, attr
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			b, _ := cmd.CombinedOutput()
			out := string(b)
			if !strings.Contains(out, "probed") {
				t.Fatalf("the probe did not run: %q", out)
			}
			secrets := []string{"CANARY-DB", "CANARY-TOKEN", "CANARY-BACKUP", "SERVED"}
			if ns {
				secrets = append(secrets, "CANARY-LISTED") // Landlock alone lets names be listed
			}
			for _, k := range secrets {
				if strings.Contains(out, k) {
					t.Errorf("the command reached %s:\n%s", k, out)
				}
			}
			if ns && !strings.Contains(out, "no such file or directory") {
				t.Errorf("the data dir was not hidden by the namespace:\n%s", out)
			}
		})
	}
}
