package exec

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// innerEnv marks the second stage of the helper: the process that confines itself and then
// becomes the shell. It is removed from the environment before the shell starts.
const innerEnv = "REEF_EXEC_SANDBOX_STAGE"

// statusFD is the descriptor on which the supervisor reports how the shell ended
// ("exit N" or "signal N"), so reef need not read it from the supervisor's own exit status.
const statusFD = 3

// helperOptions are the options of `reef exec-sandbox`.
type helperOptions struct {
	level      string
	nproc, cpu int
	fsize, as  int64
	writable   multiFlag
	hide       multiFlag // paths the command must not reach (reef's data dir); see hide_linux.go
	userns     bool      // hide them in a user and mount namespace where the machine allows
	argv       []string
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func parseHelper(args []string) (helperOptions, error) {
	var o helperOptions
	fs := flag.NewFlagSet("exec-sandbox", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.level, "level", SandboxOff, "")
	fs.IntVar(&o.nproc, "nproc", -1, "")
	fs.IntVar(&o.cpu, "cpu", -1, "")
	fs.Int64Var(&o.fsize, "fsize", -1, "")
	fs.Int64Var(&o.as, "as", -1, "")
	fs.Var(&o.writable, "write", "")
	fs.Var(&o.hide, "hide", "")
	fs.BoolVar(&o.userns, "userns", true, "")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.argv = fs.Args()
	if len(o.argv) == 0 {
		return o, errors.New("no command")
	}
	return o, nil
}

// SandboxMain is the hidden `reef exec-sandbox [options] -- argv...` command that the exec
// tool runs instead of the shell. It runs in two stages, each a fresh exec of the same binary:
//
//  1. The supervisor makes itself a child subreaper and not dumpable, starts stage 2 and reaps
//     whatever ends up as its child. When the command ends, or on SIGTERM (reef's timeout or
//     cancellation) or when reef dies (the parent-death signal), it kills every descendant:
//     processes that left the process group or the session (setsid, nohup, double forks) are
//     re-parented to it, not to init, so it finds them all. It then reports the shell's end on
//     descriptor 3.
//  2. The inner stage sets the rlimits and no_new_privs, applies Landlock (or wraps the
//     command in bwrap), and replaces itself with the command.
func SandboxMain(args []string, stderr io.Writer) int {
	o, err := parseHelper(args)
	if err != nil {
		fmt.Fprintf(stderr, "reef exec-sandbox: %v\n", err)
		return 126
	}
	if v := os.Getenv(innerEnv); v == "inner" || v == nsEnvValue {
		err := confineAndExec(o) // returns only on failure
		fmt.Fprintf(stderr, "reef exec-sandbox: %v\n", err)
		return 126
	}
	return supervise(o, stderr)
}

// supervise runs stage 2 and outlives it until every descendant is gone.
func supervise(o helperOptions, stderr io.Writer) int {
	var status *os.File
	var st unix.Stat_t
	if unix.Fstat(statusFD, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO { // reef's report pipe
		unix.CloseOnExec(statusFD)
		status = os.NewFile(statusFD, "status")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(stderr, "reef exec-sandbox: cannot become a subreaper: %v\n", err)
		return 126
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	start := func(stage string, attr *syscall.SysProcAttr) (int, error) {
		return syscall.ForkExec(exe, os.Args, &syscall.ProcAttr{
			Env: append(os.Environ(), innerEnv+"="+stage), Files: []uintptr{0, 1, 2}, Sys: attr})
	}
	pid, err := -1, errors.New("no namespace wanted")
	if wantNamespace(o) {
		pid, err = start(nsEnvValue, namespaceAttr())
	}
	if err != nil { // no user namespaces here (or none wanted): Landlock and the peer check remain
		pid, err = start("inner", &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL})
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef exec-sandbox: cannot start the command: %v\n", err)
		return 126
	}
	// Not dumpable only now: the child's uid_map is written from here, and a child of a
	// process that is not dumpable has /proc files only root may write. The command has not
	// started yet (stage 2 sets up its confinement first).
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)

	var killing atomic.Bool
	go func() {
		<-sigs
		killing.Store(true)
		killChildren()
	}()
	var shell syscall.WaitStatus
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: nothing is left
			break
		}
		if got == pid {
			shell = ws
			killing.Store(true)
		}
		if killing.Load() {
			killChildren()
		}
	}

	report, code := "exit "+strconv.Itoa(shell.ExitStatus()), shell.ExitStatus()
	if shell.Signaled() {
		report, code = "signal "+strconv.Itoa(int(shell.Signal())), 128+int(shell.Signal())
	}
	if status != nil {
		status.WriteString(report)
		status.Close()
	}
	return code
}

// killChildren sends SIGKILL to every child of this process. Called after each reap while
// the call ends, it reaches every descendant: when a process dies its children are
// re-parented to this subreaper before it can be reaped.
func killChildren() {
	for _, pid := range children() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// children lists this process's children from /proc/self/task/*/children.
func children() []int {
	var pids []int
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				pids = append(pids, pid)
			}
		}
	}
	if len(tasks) == 0 { // a kernel without CONFIG_PROC_CHILDREN: scan every process
		pids = childrenByScan()
	}
	return pids
}

func childrenByScan() []int {
	self := os.Getpid()
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, ...
		if len(f) > 1 && f[1] == strconv.Itoa(self) {
			pids = append(pids, pid)
		}
	}
	return pids
}
