// Package exec provides the exec tool: one shell command run in the agent's workspace, in its
// own process group, with a timeout that kills the whole group, a cap on the output it returns
// and an environment stripped of the gateway's secrets. It is not a sandbox: the command runs
// with the gateway's user rights. Only its working folder is confined to the workspace.
package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
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
}

// waitDelay bounds how long Wait waits for the output pipe once the shell has exited or been
// killed, in case a process that left the group still holds it.
const waitDelay = 2 * time.Second

// Exec is the exec tool.
type Exec struct{ cfg Config }

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
	return &Exec{cfg: cfg}
}

type execArgs struct {
	Command string  `json:"command"`
	Workdir string  `json:"workdir"`
	Timeout float64 `json:"timeout"`
}

// Spec describes exec to the model.
func (e *Exec) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name: "exec",
		Description: fmt.Sprintf("Run a shell command (%s -c) in the workspace and return its combined stdout and "+
			"stderr followed by its exit code. Standard input is empty, so interactive programs will not wait for "+
			"you. The command and everything it starts are killed when the timeout passes. Output beyond %d bytes "+
			"keeps only its beginning and end.", e.cfg.Shell, e.cfg.MaxOutput),
		Parameters: schemaJSON(e.cfg),
	}
}

func schemaJSON(cfg Config) []byte {
	return fmt.Appendf(nil, `{"type":"object","properties":{`+
		`"command":{"type":"string","description":"The shell command line to run."},`+
		`"workdir":{"type":"string","description":"Folder to run in, relative to the workspace. Default: the workspace."},`+
		`"timeout":{"type":"number","exclusiveMinimum":0,"description":"Seconds before the command is killed. Default %g, at most %g."}},`+
		`"required":["command"],"additionalProperties":false}`,
		cfg.DefaultTimeout.Seconds(), cfg.MaxTimeout.Seconds())
}

// Run runs the command and waits for it, its timeout or ctx.
func (e *Exec) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a execArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
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

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := newCapped(e.cfg.MaxOutput)
	cmd := osexec.CommandContext(runCtx, e.cfg.Shell, "-c", a.Command)
	cmd.Dir = dir
	cmd.Env = FilterEnv(os.Environ(), e.cfg.Secrets)
	cmd.Stdout, cmd.Stderr = out, out // one writer: one pipe, output interleaved as written
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return tools.Result{}, fmt.Errorf("cannot start the command: %v", err)
	}
	err = cmd.Wait()

	var status string
	isErr := true
	switch {
	case ctx.Err() != nil:
		status = "cancelled; the process group was killed"
	case runCtx.Err() != nil:
		status = fmt.Sprintf("timed out after %gs; the process group was killed", timeout.Seconds())
	default:
		status, isErr = exitStatus(cmd.ProcessState)
		if errors.Is(err, osexec.ErrWaitDelay) {
			status += " (a background process kept the output open; it was cut off)"
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
