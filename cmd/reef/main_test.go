package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
	"github.com/reefgw/reef/tools/mcp/mcptest"
)

// The end-to-end tests run the real binary code in a child process: the test binary
// re-executes itself with reexecEnv set, and TestMain then runs main instead of the tests.
const reexecEnv = "REEF_TEST_MAIN"

func TestMain(m *testing.M) {
	mcptest.ServeStdio() // an MCP server for the MCP tests, when a reef child starts this binary as one
	// The exec tool of a reef child runs this binary as `reef exec-sandbox` with reef's
	// environment filtered (REEF_* removed), so it is recognised by its arguments.
	if os.Getenv(reexecEnv) == "1" || (len(os.Args) > 1 && os.Args[1] == "exec-sandbox") {
		main()
		return
	}
	if mode := os.Getenv(hardenEnv); mode != "" {
		hardenChild(mode)
		return
	}
	os.Exit(m.Run())
}

// canary is the API key every child gets; it must never show up in what reef writes.
const canary = "sk-canary-7f3a9c0e5d1b4a2f"

// runTimeout bounds every child process.
const runTimeout = 30 * time.Second

// env is the environment of a child: nothing is inherited from the test process.
type env map[string]string

// withFake is the environment of a reef whose provider is the fake OpenAI server srv.
func withFake(home string, srv *openaitest.Server) env {
	return env{
		"REEF_HOME":       home,
		"HOME":            filepath.Dir(home),
		"OPENAI_BASE_URL": srv.URL(),
		"OPENAI_API_KEY":  canary,
		"REEF_MODEL":      "openai/test-model",
		"REEF_ALLOW_ROOT": "1", // the tests may run as root (a CI container); TestAuditExposure covers the warning
	}
}

// command returns the child process for `reef args...`.
func command(ctx context.Context, e env, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	// A race-enabled child sleeps 1s at exit by default; a race it finds still makes it exit 66.
	cmd.Env = []string{reexecEnv + "=1", "GORACE=atexit_sleep_ms=0"}
	if _, ok := e["REEF_GATEWAY_LISTEN"]; !ok { // gateways of parallel tests must not share a port
		cmd.Env = append(cmd.Env, "REEF_GATEWAY_LISTEN=127.0.0.1:0")
	}
	for k, v := range e {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// result is what a finished child produced.
type result struct {
	stdout, stderr string
	code           int
}

// reef runs `reef args...` with stdin to completion.
func reef(t *testing.T, e env, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := command(ctx, e, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		res.code = exit.ExitCode()
	default:
		t.Fatalf("reef %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, res.stdout, res.stderr)
	}
	return res
}

// newFake starts a fake OpenAI server playing replies; it is closed when the test ends.
func newFake(t *testing.T, replies ...fake.Reply) *openaitest.Server {
	t.Helper()
	script := fake.NewScript(replies...)
	script.Models = []string{"test-model"} // what withFake names
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	return srv
}

// newHome returns a fresh REEF_HOME inside the test's temporary directory.
func newHome(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "reef-home")
}

// noCanary fails if the API key appears in any output, in the log file or the database
// under home, or in a request body the fake recorded.
func noCanary(t *testing.T, home string, srv *openaitest.Server, outputs ...string) {
	t.Helper()
	for i, out := range outputs {
		if strings.Contains(out, canary) {
			t.Errorf("output %d contains the API key:\n%s", i, out)
		}
	}
	if log, err := os.ReadFile(filepath.Join(home, "logs", "reef.log")); err == nil && bytes.Contains(log, []byte(canary)) {
		t.Errorf("the log file contains the API key:\n%s", log)
	}
	// bbolt stores values as written: a transcript holding the key would show in the file.
	if db, err := os.ReadFile(filepath.Join(home, "data", "reef.db")); err == nil && bytes.Contains(db, []byte(canary)) {
		t.Error("the database contains the API key")
	}
	if srv == nil {
		return
	}
	for i, req := range srv.Script().Requests() {
		if bytes.Contains(req.Body, []byte(canary)) {
			t.Errorf("request %d body contains the API key", i)
		}
	}
}

// syncBuffer collects a running child's output; safe to read while it writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// gateway is a running `reef gateway` child.
type gateway struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	exited         chan struct{}
	err            error // Wait's result, once exited is closed
}

// startGateway starts `reef gateway` and waits until it logs that it is ready. Its stdin is
// empty unless stdin is given.
func startGateway(t *testing.T, e env, stdin ...string) *gateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	g := &gateway{cmd: command(ctx, e, "gateway"), stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	g.cmd.Stdout, g.cmd.Stderr = g.stdout, g.stderr
	g.cmd.Stdin = strings.NewReader(strings.Join(stdin, ""))
	if err := g.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		g.err = g.cmd.Wait()
		cancel()
		close(g.exited)
	}()
	t.Cleanup(func() {
		g.cmd.Process.Kill()
		<-g.exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(g.stderr.String(), "reef gateway ready") {
		select {
		case <-g.exited:
			t.Fatalf("reef gateway exited before it was ready (%v):\n%s", g.err, g.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("reef gateway not ready after 15s:\n%s", g.stderr)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the log, not a wait for an actor
	}
	return g
}

// waitStdout waits until the gateway's stdout contains want.
func (g *gateway) waitStdout(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(g.stdout.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("gateway stdout lacks %q after 15s: %q\nstderr:\n%s", want, g.stdout, g.stderr)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the child's output
	}
}

// stop sends sig and returns the exit code.
func (g *gateway) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := g.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("reef gateway still running 20s after %v:\n%s", sig, g.stderr)
	}
	var exit *exec.ExitError
	switch {
	case g.err == nil:
		return 0
	case errors.As(g.err, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("reef gateway: %v", g.err)
	return -1
}

func TestSettleWaitsForAnswersAndSentMarks(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &running{store: st}
	const key = "agent:main:terminal:direct:owner"
	if !r.settle(key, time.Second, time.Second, nil) {
		t.Fatal("settle = false for an empty session")
	}
	var inSeq, outSeq uint64
	write := func(fn func(tx persistence.Tx) error) {
		t.Helper()
		if err := st.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx persistence.Tx) (err error) {
		inSeq, err = tx.AppendInbox(key, messages.Inbound{Text: "two"})
		return err
	})
	if r.settle(key, 50*time.Millisecond, time.Hour, nil) {
		t.Error("settle = true while a message waits for its answer")
	}
	abort := make(chan os.Signal, 1)
	abort <- syscall.SIGINT
	if r.settle(key, time.Hour, time.Hour, abort) {
		t.Error("settle = true after an abort")
	}
	// The answer is recorded (the inbox entry goes, the reply waits to be sent) ...
	write(func(tx persistence.Tx) (err error) {
		if err := tx.DeleteInbox(key, inSeq); err != nil {
			return err
		}
		outSeq, err = tx.AppendOutbox(key, messages.Outbound{Text: "reply"})
		return err
	})
	if r.settle(key, time.Hour, 50*time.Millisecond, nil) {
		t.Error("settle = true while a reply waits in the outbox")
	}
	// ... and marked sent while settle waits.
	go st.Update(func(tx persistence.Tx) error { return tx.DeleteOutbox(key, outSeq) })
	if !r.settle(key, time.Hour, 10*time.Second, nil) {
		t.Error("settle = false after the reply was marked sent")
	}
}
