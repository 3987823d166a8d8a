package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// proc is one background process. Its fields up to mu are set before it is shared.
type proc struct {
	id, session, command string
	tools                []string // the tools of the run that started it
	started              time.Time
	timeout              time.Duration
	out                  *ring
	done                 chan struct{} // closed when it ended and its end is recorded
	cancel               context.CancelFunc

	mu         sync.Mutex
	pid        int      // the supervisor's (or the shell's) pid, once started
	stdin      *os.File // the write end of its standard input; nil once closed
	ended      time.Time
	status     string
	failed     bool
	background bool   // handed over to the session: its end is reported
	tracked    bool   // the Tracker heard of its start (Processes.tracked)
	killed     string // why reef killed it ("" = it ended by itself or timed out)
	polled     int64  // output offset the last poll returned up to
}

// processID is the pid, once started.
func (p *proc) processID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// running reports whether the process has not ended yet.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) endedAt() (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended, !p.ended.IsZero()
}

// detach hands a running process over to the background, so its end is reported to its
// session. It returns false when the process has already ended.
func (p *proc) detach() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ended.IsZero() {
		return false
	}
	p.background = true
	return true
}

// kill kills the process and its whole tree for reason, and reports whether it was running.
func (p *proc) kill(reason string) bool {
	p.mu.Lock()
	if !p.ended.IsZero() {
		p.mu.Unlock()
		return false
	}
	if p.killed == "" {
		p.killed = reason
	}
	p.mu.Unlock()
	p.cancel()
	return true
}

// finish records the end and reports whether the session should be told of it.
func (p *proc) finish(now time.Time, status string, failed, timedOut bool) bool {
	p.mu.Lock()
	defer close(p.done)
	defer p.mu.Unlock()
	p.ended, p.failed = now, failed
	switch {
	case p.killed != "":
		p.status, p.failed = p.killed, true
	case timedOut && strings.Contains(status, "did not clean up"): // what reef's sweep found
		p.status, p.failed = fmt.Sprintf("timed out after %s; %s", p.timeout, status), true
	case timedOut:
		p.status, p.failed = fmt.Sprintf("timed out after %s; every process it started was killed", p.timeout), true
	default:
		p.status = status
	}
	if p.stdin != nil {
		p.stdin.Close()
		p.stdin = nil
	}
	return p.background && p.killed == ""
}

// state is one line on the process: running for how long, or how it ended.
func (p *proc) state(now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended.IsZero() {
		return "running for " + roundDur(now.Sub(p.started))
	}
	return fmt.Sprintf("ended after %s: %s", roundDur(p.ended.Sub(p.started)), p.status)
}

func (p *proc) exited() Exited {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, _, _ := p.out.since(max(0, p.out.total()-2000))
	return Exited{SessionKey: p.session, ID: p.id, Command: p.command, Status: p.status, Failed: p.failed,
		Runtime: p.ended.Sub(p.started), Tail: validText(data), Tools: p.tools}
}

// write sends data to the process's standard input; eof closes it afterwards.
// A write that the process does not read within stdinWait fails (the file's Close, safe
// while a write is in progress, ends it early when the process ends).
func (p *proc) write(data string, eof bool) error {
	p.mu.Lock()
	w := p.stdin
	ended := !p.ended.IsZero()
	p.mu.Unlock()
	if w == nil {
		if ended {
			return errors.New("the process has ended")
		}
		return errors.New("its standard input is closed (an earlier write sent eof)")
	}
	if data != "" {
		w.SetWriteDeadline(time.Now().Add(stdinWait))
		if _, err := io.WriteString(w, data); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("the process did not read its input within %s", stdinWait)
			}
			return fmt.Errorf("cannot write to its standard input: %v", err)
		}
	}
	if eof {
		p.mu.Lock()
		if p.stdin == w {
			p.stdin = nil
			w.Close()
		}
		p.mu.Unlock()
	}
	return nil
}

// stdinWait bounds one write to a process's standard input.
const stdinWait = 5 * time.Second

// sincePoll returns the output since the last poll and moves the poll's offset past it.
func (p *proc) sincePoll() (data []byte, dropped int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, dropped, p.polled = p.out.since(p.polled)
	return data, dropped
}

// validText turns output into valid UTF-8, cutting a character split at the start.
func validText(b []byte) string {
	for i := 0; i < 3 && len(b) > 0 && b[0]&0xC0 == 0x80; i++ {
		b = b[1:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func roundDur(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
