package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strings"
	"time"

	"github.com/reefgw/reef/tools"
)

// Background processes. exec with background: true starts the command and answers at once
// with the process's id; with yieldMs it waits that long first and answers like a normal
// call when the command ended by then. A command still running is handed over to the
// session's processes (Processes): it keeps running under the same supervisor and sandbox
// as any exec command, its output goes to a bounded ring that the process tool reads, its
// standard input is a pipe the process tool writes to, and its end is reported to the
// session as a system event. It is killed on its own timeout (the call's timeout, by
// default the most exec allows), on /stop and /new, when its sub-agent session ends and at
// shutdown; when reef dies, the supervisor's parent-death signal kills the tree.

// maxYield bounds yieldMs: the call itself must end well before the tool's hard timeout.
const maxYield = 10 * time.Minute

func bgSchema(cfg Config) string {
	if cfg.Processes == nil {
		return ""
	}
	return `,"background":{"type":"boolean","description":"Start the command in the background and answer at once with its process id; follow it with the process tool. You are told when it ends."},` +
		`"yieldMs":{"type":"number","exclusiveMinimum":0,"description":"Wait this many milliseconds; if the command still runs then, it goes on in the background (as with background: true) and you get its output so far."}`
}

func bgTimeoutNote(cfg Config) string {
	if cfg.Processes == nil {
		return ""
	}
	return "; in the background default and at most " + fmt.Sprint(cfg.MaxTimeout.Seconds())
}

// runBackground starts the command as a process of the call's session and answers at once
// (background) or after yieldMs.
func (e *Exec) runBackground(ctx context.Context, call tools.Call, a execArgs, dir string) (tools.Result, error) {
	m := e.cfg.Processes
	if m == nil {
		return tools.Result{}, errors.New("background processes are not available here; run the command without background or yieldMs")
	}
	if call.Env.SessionKey == "" {
		return tools.Result{}, errors.New("background processes need a session; run the command without background or yieldMs")
	}
	timeout := e.cfg.MaxTimeout
	if a.Timeout > 0 {
		timeout = min(time.Duration(a.Timeout*float64(time.Second)), e.cfg.MaxTimeout)
	}
	p, err := m.start(call.Env.SessionKey, a.Command, call.Env.Tools, timeout, a.Background || a.YieldMs <= 0, func(pctx context.Context, out io.Writer) (launched, error) {
		return e.launch(pctx, call.Env.Workspace, dir, a.Command, out)
	})
	if err != nil {
		return tools.Result{}, err
	}
	if a.Background || a.YieldMs <= 0 {
		return tools.Result{Content: fmt.Sprintf("Started in the background: process %s (pid %d). It runs until it ends or for at most %s. "+
			"Use process poll or log with id %q to read its output, write to send it input, kill to stop it; you will be told when it ends.",
			p.id, p.processID(), roundDur(timeout), p.id)}, nil
	}
	yield := min(time.Duration(a.YieldMs*float64(time.Millisecond)), maxYield)
	t := time.NewTimer(yield)
	defer t.Stop()
	select {
	case <-p.done:
	case <-ctx.Done(): // the run was stopped: the command was not handed over yet
		p.kill(byStop)
		<-p.done
		m.forget(p)
		data, _, _ := p.out.since(0)
		return tools.Result{Content: outputText(data, e.cfg.MaxOutput) + "cancelled; every process it started was killed", IsError: true}, nil
	case <-t.C:
	}
	if p.detach() {
		m.tracked(p)
		data, dropped := p.sincePoll()
		return tools.Result{Content: fmt.Sprintf("Still running after %s; it goes on in the background as process %s (pid %d), for at most %s. "+
			"Use process poll or log with id %q for more output, kill to stop it; you will be told when it ends.\nOutput so far:\n%s",
			roundDur(yield), p.id, p.processID(), roundDur(timeout), p.id, dropNote(dropped)+outputText(data, e.cfg.MaxOutput))}, nil
	}
	<-p.done
	m.forget(p) // it ended within the yield: an ordinary call's answer, nothing to follow
	data, dropped, _ := p.out.since(0)
	p.mu.Lock()
	status, failed := p.status, p.failed
	p.mu.Unlock()
	return tools.Result{Content: dropNote(dropped) + outputText(data, e.cfg.MaxOutput) + status, IsError: failed}, nil
}

// launch starts the command for a background process: output to out, a pipe as its input.
func (e *Exec) launch(ctx context.Context, workspace, dir, command string, out io.Writer) (launched, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return launched{}, fmt.Errorf("cannot start the command: %v", err)
	}
	cmd, report, err := e.command(ctx, workspace, dir, command, out, r)
	r.Close() // the child holds its own copy
	if err != nil {
		w.Close()
		return launched{}, err
	}
	wait := func() (string, bool) {
		err := cmd.Wait()
		end := report()
		if end.report != "" {
			return reportedStatus(end.report)
		}
		status, failed := exitStatus(cmd.ProcessState)
		if errors.Is(err, osexec.ErrWaitDelay) {
			status += " (a background process kept the output open; it was cut off)"
		}
		if end.swept > 0 {
			status += "; " + end.sweptNote()
		}
		return status, failed
	}
	return launched{pid: cmd.Process.Pid, stdin: w, wait: wait}, nil
}

// outputText renders output as exec does: at most max bytes (head and tail), ending in a newline.
func outputText(data []byte, max int) string {
	c := newCapped(max)
	c.Write(data)
	text := c.String()
	if text == "" {
		text = "(no output)"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text
}

func dropNote(dropped int64) string {
	if dropped <= 0 {
		return ""
	}
	return fmt.Sprintf("[%d earlier bytes are no longer kept]\n", dropped)
}
