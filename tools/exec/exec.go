// Package exec provides the exec tool: one shell command run in the agent's workspace, with a
// timeout, a cap on the output it returns and an environment stripped of the gateway's secrets.
//
// On Linux, with Config.Helper set (reef sets it to itself: `reef exec-sandbox`), every command
// runs under a small supervisor process (see SandboxMain):
//
//   - Every descendant dies with the call, on timeout, on cancellation and after a normal exit.
//     The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER): a process that leaves the
//     process group or the session (setsid, nohup ... &, a double fork) is re-parented to it
//     instead of to init, so "its children" is always the whole remaining tree, and it kills
//     and reaps them until none is left. This works unprivileged and needs no cgroup (this
//     machine's cgroups are often not delegated to reef's user); only a process started
//     through someone else (systemd-run, at, a container daemon) escapes it.
//   - The sandbox level (Config.Sandbox) adds rlimits (processes, file size, CPU time, address
//     space), no_new_privs and Landlock (writes only in the workspace and temp directories;
//     from Landlock ABI 6, no signals to processes outside the sandbox, so the command cannot
//     kill its supervisor), or bubblewrap namespaces instead of Landlock.
//   - Config.Hidden (reef's data dir) is out of reach at every level but off: a user and mount
//     namespace of the command's own hides it, and Landlock refuses to read it (hide_linux.go).
//     Every command carries MarkerEnv, by which reef tells its processes (Started).
//
// Without the helper (other systems) the command runs in its own process group, and the group
// is killed at the end of the call; a process that leaves the group survives.
package exec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Config shapes the exec tool. Zero fields take the defaults shown.
type Config struct {
	DefaultTimeout time.Duration // when the call gives none, default 120 s
	MaxTimeout     time.Duration // the most a call may ask for, default 30 min
	MaxOutput      int           // bytes of combined output returned, head and tail kept, default 64 KB
	// Secrets are secret values the gateway holds (API keys, bot tokens): an environment
	// variable whose value contains one of them is not passed to the command.
	Secrets []string
	Shell   string // runs the command as Shell -c command, default /bin/sh

	// Helper runs `reef exec-sandbox` (e.g. {"/usr/bin/reef", "exec-sandbox"}); empty runs the
	// shell directly, without supervisor or sandbox.
	Helper   []string
	Sandbox  string   // auto (default), off, landlock or bwrap; see the package doc
	Limits   Limits   // rlimits of every command (not with Sandbox off)
	Writable []string // writable under landlock and bwrap besides the workspace and TempDirs
	TempDirs []string // writable temp directories; default TMPDIR, /tmp, /var/tmp, /dev/shm
	// Hidden are paths commands must not reach: reef's data directory (database, gateway
	// token, backups, control socket). Hidden from every level but off; see hide_linux.go.
	// A hidden path that holds the workspace or a writable folder is not hidden.
	Hidden []string
	// noNamespace leaves hidden paths to Landlock alone, as on a machine without user
	// namespaces (tests).
	noNamespace bool

	// Processes owns background processes (background, yieldMs; see background.go); nil:
	// exec offers neither and every command runs in the foreground.
	Processes *Processes
}

// waitDelay bounds how long Wait waits for the output pipe once the shell has exited or been
// killed, in case a process that left the group still holds it.
const waitDelay = 2 * time.Second

// Exec is the exec tool.
type Exec struct {
	cfg   Config
	level Level
}

var _ tools.Tool = (*Exec)(nil)

// New returns the exec tool. It starts nothing.
func New(cfg Config) tools.Tool {
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 120 * time.Second
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 30 * time.Minute
	}
	cfg.DefaultTimeout = min(cfg.DefaultTimeout, cfg.MaxTimeout)
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = 64 << 10
	}
	if cfg.Shell == "" {
		cfg.Shell = "/bin/sh"
	}
	cfg.Secrets = append([]string(nil), cfg.Secrets...)
	cfg.Sandbox = cmpOr(cfg.Sandbox, SandboxAuto)
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.TempDirs == nil {
		cfg.TempDirs = defaultTempDirs()
	}
	e := &Exec{cfg: cfg}
	if runtime.GOOS != "linux" {
		e.cfg.Helper = nil
	}
	if len(e.cfg.Helper) > 0 {
		e.level = Probe(cfg.Sandbox)
	}
	return e
}

// plainArgs are the arguments of exec without background processes.
type plainArgs struct {
	Command string  `json:"command"`
	Workdir string  `json:"workdir"`
	Timeout float64 `json:"timeout"`
}

// decode reads the call's arguments; background and yieldMs only where exec offers them.
func (e *Exec) decode(raw []byte) (execArgs, error) {
	if e.cfg.Processes != nil {
		var a execArgs
		err := tools.DecodeArgs(raw, &a)
		return a, err
	}
	var p plainArgs
	err := tools.DecodeArgs(raw, &p)
	return execArgs{Command: p.Command, Workdir: p.Workdir, Timeout: p.Timeout}, err
}

type execArgs struct {
	Command    string  `json:"command"`
	Workdir    string  `json:"workdir"`
	Timeout    float64 `json:"timeout"`
	Background bool    `json:"background"`
	YieldMs    float64 `json:"yieldMs"`
}

// Spec describes exec to the model.
func (e *Exec) Spec() messages.ToolSpec {
	killed := "when the timeout passes"
	if len(e.cfg.Helper) > 0 {
		killed = "when it ends or the timeout passes, so background processes (&, nohup, setsid) do not outlive the call"
	}
	desc := fmt.Sprintf("Run a shell command (%s -c) in the workspace and return its combined stdout and "+
		"stderr followed by its exit code. Standard input is empty, so interactive programs will not wait for "+
		"you. The command and everything it starts are killed %s. Output beyond %d bytes "+
		"keeps only its beginning and end.", e.cfg.Shell, killed, e.cfg.MaxOutput)
	if e.cfg.Processes != nil {
		desc += " For long-running commands (servers, builds, watchers) set background: true, or yieldMs to wait " +
			"that long first: the command keeps running as a background process you follow with the process tool " +
			"(poll, log, write to its input, kill), and you are told when it ends."
	}
	return messages.ToolSpec{Name: "exec", Description: desc, Parameters: schemaJSON(e.cfg)}
}

func schemaJSON(cfg Config) []byte {
	return fmt.Appendf(nil, `{"type":"object","properties":{`+
		`"command":{"type":"string","description":"The shell command line to run."},`+
		`"workdir":{"type":"string","description":"Folder to run in, relative to the workspace. Default: the workspace."},`+
		`"timeout":{"type":"number","exclusiveMinimum":0,"description":"Seconds before the command is killed. Default %g, at most %g%s."}%s},`+
		`"required":["command"],"additionalProperties":false}`,
		cfg.DefaultTimeout.Seconds(), cfg.MaxTimeout.Seconds(), bgTimeoutNote(cfg), bgSchema(cfg))
}

// Run runs the command and waits for it, its timeout or ctx.
func (e *Exec) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	a, err := e.decode(call.Args)
	if err != nil {
		return tools.Result{}, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return tools.Result{}, errors.New("command is required")
	}
	if a.Timeout < 0 {
		return tools.Result{}, errors.New("timeout must be a positive number of seconds")
	}
	timeout := e.cfg.DefaultTimeout
	if a.Timeout > 0 {
		timeout = min(time.Duration(a.Timeout*float64(time.Second)), e.cfg.MaxTimeout)
	}
	dir, err := workdir(call.Env.Workspace, a.Workdir)
	if err != nil {
		return tools.Result{}, err
	}

	if e.level.Err != nil {
		return tools.Result{}, fmt.Errorf("exec cannot run commands here: %v; change tools.exec.sandbox (reef doctor shows what is missing)", e.level.Err)
	}
	if a.Background || a.YieldMs > 0 {
		return e.runBackground(ctx, call, a, dir)
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := newCapped(e.cfg.MaxOutput)
	cmd, report, err := e.command(runCtx, call.Env.Workspace, dir, a.Command, out, nil)
	if err != nil {
		return tools.Result{}, err
	}
	err = cmd.Wait()
	end := report()

	killed := "the process group was killed"
	if len(e.cfg.Helper) > 0 {
		killed = "every process it started was killed"
	}
	if end.swept > 0 {
		killed = end.sweptNote()
	}
	var status string
	isErr := true
	switch {
	case ctx.Err() != nil:
		status = "cancelled; " + killed
	case runCtx.Err() != nil:
		status = fmt.Sprintf("timed out after %gs; %s", timeout.Seconds(), killed)
	case end.report != "":
		status, isErr = reportedStatus(end.report)
	default:
		status, isErr = exitStatus(cmd.ProcessState)
		if errors.Is(err, osexec.ErrWaitDelay) {
			status += " (a background process kept the output open; it was cut off)"
		}
		if end.swept > 0 {
			status += "; " + killed
		}
	}
	text := out.String()
	if text == "" {
		text = "(no output)"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return tools.Result{Content: text + status, IsError: isErr}, nil
}

// ending is how a command ended, as far as reef can tell after Wait.
type ending struct {
	// report is how the helper said the shell ended ("exit N", "signal N"); "" without a
	// helper, or when the helper died before it could say (the command killed it).
	report string
	// swept counts the processes of the call that reef still found running after the call
	// and killed itself (sweep): the supervisor did not, so it was killed or failed.
	swept  int
	helper bool // a supervisor ran the command
}

// sweptNote says what reef's own sweep did, without claiming more.
func (e ending) sweptNote() string {
	if !e.helper {
		return fmt.Sprintf("reef found %d process(es) of the call that had left its process group, by reef's marker in their "+
			"environment, and killed them; one that also dropped the marker would not be found", e.swept)
	}
	return fmt.Sprintf("its supervisor did not clean up (the command may have killed it): reef found %d process(es) of the call "+
		"still running, by process group and by reef's marker in their environment, and killed them; a process that left "+
		"the group and dropped the marker would not be found", e.swept)
}

// command starts the shell, directly or under the helper, with stdin as its standard input
// (nil: empty). report returns, after Wait, how the command ended; it sweeps what the call
// left running.
func (e *Exec) command(ctx context.Context, workspace, dir, command string, out io.Writer, stdin *os.File) (*osexec.Cmd, func() ending, error) {
	argv := []string{e.cfg.Shell, "-c", command}
	var r, w *os.File
	if len(e.cfg.Helper) > 0 {
		ws, err := filepath.EvalSymlinks(workspace) // workdir resolved it already
		if err != nil {
			return nil, nil, fmt.Errorf("cannot open the workspace: %s", tools.ExplainPathError(workspace, err))
		}
		writable := append(append([]string{ws}, e.cfg.TempDirs...), e.cfg.Writable...)
		argv = append(slices.Clone(e.cfg.Helper), helperArgs(e.level.Mode, e.cfg.Limits, writable, hidable(e.cfg.Hidden, writable), argv...)...)
		if e.cfg.noNamespace {
			argv = slices.Insert(argv, len(e.cfg.Helper), "-userns=false")
		}
		if r, w, err = os.Pipe(); err != nil {
			return nil, nil, fmt.Errorf("cannot start the command: %v", err)
		}
	}
	cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	id := newCallID()
	cmd.Env = append(FilterEnv(os.Environ(), e.cfg.Secrets), MarkerEnv+"="+id)
	cmd.Stdout, cmd.Stderr = out, out // one writer: one pipe, output interleaved as written
	if stdin != nil {
		cmd.Stdin = stdin
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = waitDelay
	if w == nil {
		cmd.Cancel = func() error { return ignoreESRCH(syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)) }
	} else {
		// The supervisor kills the whole tree and exits; WaitDelay later, os/exec kills it.
		cmd.Cancel = func() error { return ignoreESRCH(cmd.Process.Signal(syscall.SIGTERM)) }
		dieWithParent(cmd.SysProcAttr) // reef gone: the supervisor cleans up too
		cmd.ExtraFiles = []*os.File{w} // descriptor 3: statusFD
	}
	if err := cmd.Start(); err != nil {
		if w != nil {
			r.Close()
			w.Close()
		}
		return nil, nil, fmt.Errorf("cannot start the command: %v", err)
	}
	if w != nil {
		w.Close()
	}
	pgid := cmd.Process.Pid // Setpgid: the supervisor's (or the shell's) group, which the shell shares
	report := func() ending {
		end := ending{helper: r != nil}
		if r != nil {
			r.SetReadDeadline(time.Now().Add(time.Second))
			b, _ := io.ReadAll(io.LimitReader(r, 64))
			r.Close()
			end.report = string(b)
		}
		end.swept = sweep(id, pgid)
		return end
	}
	return cmd, report, nil
}

// hidable is hidden without the paths that hold a writable folder (the workspace among them),
// which hiding would take away from the command.
func hidable(hidden, writable []string) []string {
	var out []string
	for _, h := range hidden {
		h = filepath.Clean(h)
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		holds := false
		for _, w := range writable {
			if w == h || strings.HasPrefix(w, h+string(filepath.Separator)) {
				holds = true
			}
		}
		if !holds && filepath.IsAbs(h) {
			out = append(out, h)
		}
	}
	return out
}

// newCallID is a fresh random id for MarkerEnv.
func newCallID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return hex.EncodeToString(b[:])
}

func ignoreESRCH(err error) error {
	if err != nil && !errors.Is(err, syscall.ESRCH) && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// reportedStatus renders the helper's report of how the shell ended.
func reportedStatus(report string) (string, bool) {
	kind, num, _ := strings.Cut(report, " ")
	n, err := strconv.Atoi(num)
	switch {
	case err != nil:
		return "exit status unknown", true
	case kind == "signal":
		return fmt.Sprintf("killed by signal %s", syscall.Signal(n)), true
	}
	return fmt.Sprintf("exit code %d", n), n != 0
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// exitStatus renders how the shell ended and whether that is a failure.
func exitStatus(ps *os.ProcessState) (string, bool) {
	if ps == nil {
		return "exit status unknown", true
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %s", ws.Signal()), true
	}
	code := ps.ExitCode()
	return fmt.Sprintf("exit code %d", code), code != 0
}

// workdir resolves the working folder inside the workspace, twice: through os.Root, which
// refuses "..", absolute and escaping symlinks, and through the resolved real path.
func workdir(workspace, wd string) (string, error) {
	if workspace == "" {
		return "", errors.New("no workspace is configured for this agent")
	}
	realWS, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("cannot open the workspace: %s", tools.ExplainPathError(workspace, err))
	}
	if wd == "" {
		return realWS, nil
	}
	rel, err := tools.WorkspacePath(workspace, wd)
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", fmt.Errorf("cannot open the workspace: %s", tools.ExplainPathError(workspace, err))
	}
	defer root.Close()
	info, err := root.Stat(rel)
	if err != nil {
		return "", fmt.Errorf("workdir: %w", tools.ExplainPathError(wd, err))
	}
	if !info.IsDir() {
		return "", fmt.Errorf("workdir %s is not a folder", wd)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(realWS, rel))
	if err != nil {
		return "", fmt.Errorf("workdir: %w", tools.ExplainPathError(wd, err))
	}
	if _, err := tools.WorkspacePath(realWS, real); err != nil {
		return "", fmt.Errorf("workdir: %w: %s", tools.ErrEscapes, wd)
	}
	return real, nil
}
