package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Process is the process tool: it follows the background processes exec started in the
// calling session (OpenClaw's actions: list, poll, log, write, kill, clear, remove). A
// session sees only its own processes.
type Process struct {
	m         *Processes
	maxOutput int
}

var _ tools.Tool = (*Process)(nil)

// Defaults of the process tool.
const (
	defaultLogLines = 200
	maxPollWait     = 2 * time.Minute
	killWait        = 10 * time.Second
)

// NewProcess returns the process tool over m; maxOutput caps the bytes one answer returns
// (default 64 KB, as exec).
func NewProcess(m *Processes, maxOutput int) *Process {
	if maxOutput <= 0 {
		maxOutput = 64 << 10
	}
	return &Process{m: m, maxOutput: maxOutput}
}

type processArgs struct {
	Action  string  `json:"action"`
	ID      string  `json:"id"`
	Timeout float64 `json:"timeout"`
	Offset  *int    `json:"offset"`
	Limit   int     `json:"limit"`
	Data    string  `json:"data"`
	EOF     bool    `json:"eof"`
}

// Spec describes the process tool to the model.
func (t *Process) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name: "process",
		Description: "Follow the background processes exec started in this conversation (exec with background or yieldMs). " +
			"Actions: list (every process, running and finished); poll (output since the last poll and whether it still runs; " +
			"timeout waits up to that many ms for it to end); log (its kept output by lines: offset, limit; default the last 200); " +
			"write (send data to its standard input; eof closes the input); kill (stop it and everything it started); " +
			"clear (forget a finished process); remove (kill if running, then forget).",
		Parameters: []byte(`{"type":"object","properties":{` +
			`"action":{"type":"string","enum":["list","poll","log","write","kill","clear","remove"]},` +
			`"id":{"type":"string","description":"The process id exec answered with (every action but list)."},` +
			`"timeout":{"type":"number","minimum":0,"description":"poll: milliseconds to wait for the process to end, at most 120000. Default 0."},` +
			`"offset":{"type":"integer","minimum":0,"description":"log: first line, from 0. Default: the last limit lines."},` +
			`"limit":{"type":"integer","minimum":1,"description":"log: lines to return. Default 200."},` +
			`"data":{"type":"string","description":"write: the text to send to the process's standard input (add \n to end a line)."},` +
			`"eof":{"type":"boolean","description":"write: close the standard input after data."}},` +
			`"required":["action"],"additionalProperties":false}`),
	}
}

// Run performs one action on the session's processes.
func (t *Process) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a processArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	session := call.Env.SessionKey
	if a.Action == "list" {
		return tools.Result{Content: t.list(session)}, nil
	}
	switch a.Action {
	case "poll", "log", "write", "kill", "clear", "remove":
	case "":
		return tools.Result{}, errors.New("action is required: list, poll, log, write, kill, clear or remove")
	default:
		return tools.Result{}, fmt.Errorf("unknown action %q: use list, poll, log, write, kill, clear or remove", a.Action)
	}
	if a.ID == "" {
		return tools.Result{}, fmt.Errorf("%s needs the process id (process list shows them)", a.Action)
	}
	p, err := t.m.get(session, a.ID)
	if err != nil {
		return tools.Result{}, err
	}
	switch a.Action {
	case "poll":
		return t.poll(ctx, p, a.Timeout)
	case "log":
		return t.log(p, a.Offset, a.Limit)
	case "write":
		if err := p.write(a.Data, a.EOF); err != nil {
			return tools.Result{}, fmt.Errorf("process %s: %v", p.id, err)
		}
		msg := fmt.Sprintf("Wrote %d bytes to process %s.", len(a.Data), p.id)
		if a.EOF {
			msg += " Its standard input is closed."
		}
		return tools.Result{Content: msg}, nil
	case "kill":
		if !p.kill(byAgent) {
			return tools.Result{Content: fmt.Sprintf("Process %s had already ended: %s", p.id, p.state(t.m.cfg.Now()))}, nil
		}
		return tools.Result{Content: t.waitKilled(ctx, p)}, nil
	case "clear":
		if p.running() {
			return tools.Result{}, fmt.Errorf("process %s is still running: kill it first, or use remove", p.id)
		}
		t.m.forget(p)
		return tools.Result{Content: fmt.Sprintf("Process %s is forgotten.", p.id)}, nil
	default: // remove
		text := ""
		if p.kill(byAgent) {
			text = t.waitKilled(ctx, p) + " "
		}
		t.m.forget(p)
		return tools.Result{Content: text + fmt.Sprintf("Process %s is forgotten.", p.id)}, nil
	}
}

func (t *Process) list(session string) string {
	ps := t.m.list(session)
	if len(ps) == 0 {
		return "No background processes in this conversation."
	}
	now := t.m.cfg.Now()
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s  pid %d  %s  $ %s\n", p.id, p.processID(), p.state(now), oneLine(p.command, 120))
	}
	return strings.TrimRight(b.String(), "\n")
}

// poll returns the output since the last poll, waiting up to wait ms for the end.
func (t *Process) poll(ctx context.Context, p *proc, waitMs float64) (tools.Result, error) {
	if waitMs > 0 {
		timer := time.NewTimer(min(time.Duration(waitMs*float64(time.Millisecond)), maxPollWait))
		select {
		case <-p.done:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	data, dropped := p.sincePoll()
	text := "(no new output)\n"
	if len(data) > 0 {
		text = outputText(data, t.maxOutput)
	}
	return tools.Result{Content: dropNote(dropped) + text + fmt.Sprintf("Process %s: %s", p.id, p.state(t.m.cfg.Now()))}, nil
}

// log returns the kept output by lines.
func (t *Process) log(p *proc, offset *int, limit int) (tools.Result, error) {
	if limit <= 0 {
		limit = defaultLogLines
	}
	data, dropped, _ := p.out.since(0)
	text := validText(data)
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	from := max(0, n-limit)
	if offset != nil {
		if *offset < 0 {
			return tools.Result{}, errors.New("offset must be 0 or more")
		}
		from = min(*offset, n)
	}
	to := min(n, from+limit)
	head := fmt.Sprintf("Process %s: %s. Lines %d-%d of %d", p.id, p.state(t.m.cfg.Now()), from, max(from, to-1), n)
	if n == 0 {
		head = fmt.Sprintf("Process %s: %s. No output", p.id, p.state(t.m.cfg.Now()))
	}
	if dropped > 0 {
		head += fmt.Sprintf(" (its first %d bytes are no longer kept)", dropped)
	}
	body := strings.Join(lines[from:to], "")
	if len(body) > t.maxOutput {
		body = outputText([]byte(body), t.maxOutput)
	}
	return tools.Result{Content: head + ":\n" + body}, nil
}

// waitKilled waits for a killed process to end and describes it.
func (t *Process) waitKilled(ctx context.Context, p *proc) string {
	timer := time.NewTimer(killWait)
	defer timer.Stop()
	select {
	case <-p.done:
		return fmt.Sprintf("Process %s %s", p.id, p.state(t.m.cfg.Now()))
	case <-timer.C:
	case <-ctx.Done():
	}
	return fmt.Sprintf("Process %s was told to stop; it has not ended yet.", p.id)
}

// oneLine shortens a command for a list.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
