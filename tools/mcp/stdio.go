package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// maxMessage bounds one message a server sends (a line over stdio, an HTTP body or an event).
const maxMessage = 32 << 20

// terminateWait is how long a stdio server gets to exit after its stdin closed, and again
// after SIGTERM, before it is killed.
const terminateWait = 2 * time.Second

// stdio runs a server as a child process and speaks newline-delimited JSON-RPC on its stdin
// and stdout. Its reading goroutine, started by startStdio, delivers every line, reaps the
// process at end of output and ends the session.
type stdio struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex // one writer at a time
	closed sync.Once
	exited chan struct{} // closed when the reader reaped the process
}

// startStdio starts cmd and the goroutine reading its output into s.
func startStdio(cmd *exec.Cmd, s *session) (*stdio, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	t := &stdio{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	s.t = t
	go t.read(stdout, s)
	return t, nil
}

func (t *stdio) read(stdout io.Reader, s *session) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	var readErr error
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			s.deliver(line)
		}
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
	}
	if readErr != nil {
		_ = t.cmd.Process.Kill() // a line too long: the stream cannot be followed any more
	}
	waitErr := t.cmd.Wait()
	close(t.exited)
	switch {
	case readErr != nil:
		s.ended(readErr)
	case waitErr != nil:
		s.ended(fmt.Errorf("the server exited: %w", waitErr))
	default:
		s.ended(errors.New("the server exited"))
	}
}

// readLine reads one line, at most maxMessage bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxMessage {
			return nil, fmt.Errorf("the server sent a message over %d MiB", maxMessage>>20)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

func (t *stdio) send(ctx context.Context, msg []byte, _ string) error {
	done := make(chan error, 1)
	go func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		_, err := t.stdin.Write(append(msg, '\n'))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%w: %w", errConnClosed, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err() // a server that reads nothing: the write ends when it is killed
	}
}

// close closes the server's stdin and waits for it to exit: SIGTERM after terminateWait,
// SIGKILL after another.
func (t *stdio) close() error {
	t.closed.Do(func() {
		_ = t.stdin.Close()
		for _, sig := range []os.Signal{terminate, os.Kill} {
			select {
			case <-t.exited:
				return
			case <-time.After(terminateWait):
			}
			if sig == terminate {
				_ = t.cmd.Process.Signal(sig)
			} else {
				_ = t.cmd.Process.Kill()
			}
		}
		<-t.exited
	})
	return nil
}
