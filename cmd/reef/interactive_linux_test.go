package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// openPTY returns a new pseudo-terminal pair: what the test writes to master, the child reads
// from slave, and the other way round. Standard library only.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("pty number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pty slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// interactive is a `reef chat` child on a pseudo-terminal.
type interactive struct {
	t      *testing.T
	master *os.File
	tty    *syncBuffer // what the child wrote to the terminal (and the terminal's echo)
	stderr *syncBuffer
	exited chan struct{} // closed when the child exited; err is Wait's result
	err    error
	pid    int
}

func startInteractive(t *testing.T, e env) *interactive {
	t.Helper()
	return startInteractiveTTY(t, e, false)
}

// startInteractiveTTY is startInteractive; with ctty the pseudo-terminal is the child's
// controlling terminal (in a session of its own), so a typed Ctrl-C signals its whole
// foreground process group, the commands it runs included, as in a real terminal.
func startInteractiveTTY(t *testing.T, e env, ctty bool) *interactive {
	t.Helper()
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	cmd := command(ctx, e, "chat")
	c := &interactive{t: t, master: master, tty: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, c.stderr
	if ctty {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	c.pid = cmd.Process.Pid
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			c.tty.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		c.err = cmd.Wait()
		cancel()
		close(c.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
	})
	c.waitFor("tty", c.tty, "Ctrl-C stops a run")
	return c
}

// waitFor waits until buf holds want (carriage returns, which the terminal writes before
// each line end, are left out).
func (c *interactive) waitFor(name string, buf *syncBuffer, want string) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(strings.ReplaceAll(buf.String(), "\r", ""), want) {
		select {
		case <-c.exited:
			c.t.Fatalf("reef chat exited (%v) before %s showed %q:\ntty: %q\nstderr: %q", c.err, name, want, c.tty, c.stderr)
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s lacks %q after 15s:\ntty: %q\nstderr: %q", name, want, c.tty, c.stderr)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the child's output
	}
}

func (c *interactive) exit(within time.Duration) error {
	c.t.Helper()
	select {
	case <-c.exited:
		return c.err
	case <-time.After(within):
		c.t.Fatalf("reef chat still running after %v:\ntty: %q\nstderr: %q", within, c.tty, c.stderr)
		return nil
	}
}

func TestInteractiveChatCtrlCStopsTheRunThenExits(t *testing.T) {
	srv := newFake(t, fake.Reply{Hang: true}, fake.Reply{Text: "the second answer"})
	home := newHome(t)
	c := startInteractive(t, withFake(home, srv))
	c.waitFor("tty", c.tty, "› ")

	c.master.WriteString("a question that hangs\n")
	deadline := time.Now().Add(15 * time.Second)
	for len(srv.Script().Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no model request after 15s; stderr: %q", c.stderr)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the fake's record
	}
	// Ctrl-C during a run stops the run, not reef.
	c.running()
	c.signal(syscall.SIGINT)
	c.waitFor("tty", c.tty, "(stopping the run — press Ctrl-C again to exit)")
	c.waitFor("tty", c.tty, "\nStopped.\n")

	c.master.WriteString("and now?\n")
	c.waitFor("tty", c.tty, "\nthe second answer\n")

	// Ctrl-C with no run going asks for a second one, as the greeting says ...
	time.Sleep(2100 * time.Millisecond) // out of the first Ctrl-C's two seconds
	c.signal(syscall.SIGINT)
	c.waitFor("tty", c.tty, "(press Ctrl-C again to exit, or Ctrl-D)")
	c.running()
	// ... and exits cleanly on it.
	c.signal(syscall.SIGINT)
	if err := c.exit(5 * time.Second); err != nil {
		t.Errorf("reef chat after Ctrl-C twice: %v; stderr: %q", err, c.stderr)
	}
	checkDatabase(t, home)
	noCanary(t, home, srv, c.tty.String(), c.stderr.String())
}

func TestInteractiveChatCtrlDExits(t *testing.T) {
	srv := newFake(t, fake.Reply{Text: "hi"})
	home := newHome(t)
	c := startInteractive(t, withFake(home, srv))
	c.master.WriteString("hello\n")
	c.waitFor("tty", c.tty, "\nhi\n")
	c.master.WriteString("\x04") // Ctrl-D: end of input on a terminal
	if err := c.exit(5 * time.Second); err != nil {
		t.Errorf("reef chat after Ctrl-D: %v; stderr: %q", err, c.stderr)
	}
	if got := c.tty.String(); !strings.Contains(got, `agent "main" on openai/test-model`) {
		t.Errorf("no greeting on the terminal: %q", got)
	}
	// The shell's prompt gets a line of its own: reef's prompt is erased, not left behind.
	if got := c.tty.String(); !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the terminal does not end with reef's prompt erased: %q", got[max(0, len(got)-40):])
	}
}

// TestInteractiveChatAnswersCommandsDuringARun: the terminal reads while a run goes, so
// /status is answered while a tool runs (and names it), other text is queued with a note,
// and stop stops the run.
func TestInteractiveChatAnswersCommandsDuringARun(t *testing.T) {
	srv := newFake(t,
		fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "exec", Arguments: `{"command":"sleep 30"}`}}},
		fake.Reply{Text: "after the stop"})
	home := newHome(t)
	c := startInteractive(t, withFake(home, srv))
	c.master.WriteString("sleep a while\n")
	c.waitFor("tty", c.tty, "· exec sleep 30")

	asked := time.Now()
	c.master.WriteString("/status\n")
	c.waitFor("tty", c.tty, "Now: running exec sleep 30")
	t.Logf("/status answered %v after it was typed", time.Since(asked))

	c.master.WriteString("and then?\n")
	c.waitFor("tty", c.tty, "↳ noted: the running agent reads this at its next step")

	c.master.WriteString("stop\n")
	c.waitFor("tty", c.tty, "\nStopped.\n")
	if got := c.tty.String(); strings.Contains(got, "after the stop") {
		t.Errorf("the stopped run went on to the model's next reply: %q", got)
	}
	c.master.WriteString("\x04")
	if err := c.exit(5 * time.Second); err != nil {
		t.Errorf("reef chat after Ctrl-D: %v; stderr: %q", err, c.stderr)
	}
	checkDatabase(t, home)
}

// TestInteractiveChatCtrlLClearsTheScreen: Ctrl-L clears the screen and redraws the line
// being typed, instead of echoing ^L.
func TestInteractiveChatCtrlLClearsTheScreen(t *testing.T) {
	srv := newFake(t, fake.Reply{Text: "cleared and answered"})
	c := startInteractive(t, withFake(newHome(t), srv))
	c.waitFor("tty", c.tty, "› ")
	c.master.WriteString("half a li")
	c.master.WriteString("\x0c")
	c.waitFor("tty", c.tty, "\x1b[2J\x1b[H")
	c.master.WriteString("ne\n")
	c.waitFor("tty", c.tty, "\ncleared and answered\n")
	if got := c.tty.String(); strings.Contains(got, "^L") {
		t.Errorf("Ctrl-L echoed as ^L: %q", got)
	}
	if got := srv.Script().Requests(); len(got) != 1 || !strings.Contains(lastUser(got[0]), "half a line") {
		t.Errorf("the model was not asked %q: %+v", "half a line", got)
	}
}

// running fails if the child has exited.
func (c *interactive) running() {
	c.t.Helper()
	select {
	case <-c.exited:
		c.t.Fatalf("reef chat exited (%v):\ntty: %q\nstderr: %q", c.err, c.tty, c.stderr)
	default:
	}
}

// signal sends sig to the child, as Ctrl-C on its terminal would.
func (c *interactive) signal(sig syscall.Signal) {
	c.t.Helper()
	if err := syscall.Kill(c.pid, sig); err != nil {
		c.t.Fatal(err)
	}
}

// TestInteractiveChatCtrlCDuringAToolSaysStopped: Ctrl-C while a tool runs stops the run,
// and the terminal says so: "Stopped.", not that the tool failed.
func TestInteractiveChatCtrlCDuringAToolSaysStopped(t *testing.T) {
	srv := newFake(t,
		fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "exec", Arguments: `{"command":"sleep 30"}`}}},
		fake.Reply{Text: "after the stop"})
	home := newHome(t)
	c := startInteractiveTTY(t, withFake(home, srv), true)
	c.master.WriteString("sleep a while\n")
	c.waitFor("tty", c.tty, "· exec sleep 30")
	c.running()
	c.master.WriteString("\x03") // Ctrl-C as typed: the terminal signals its whole foreground process group
	c.waitFor("tty", c.tty, "\nStopped.\n")
	c.master.WriteString("/status\n") // a later line: anything the stop printed late is before it
	c.waitFor("tty", c.tty, "Session: ")
	if got := c.tty.String(); strings.Contains(got, "fail") || strings.Contains(got, "✗") {
		t.Errorf("the stopped run is shown as a failure:\n%s", got)
	}
	c.master.WriteString("\x04")
	if err := c.exit(5 * time.Second); err != nil {
		t.Errorf("reef chat after Ctrl-D: %v; stderr: %q", err, c.stderr)
	}
}
