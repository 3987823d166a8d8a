// Package testutil holds helpers for tests of reef's actors: a real actor system per test
// with logs discarded, a probe actor that forwards what it receives to a Go channel, and
// Expect to wait for a message of a given type.
package testutil

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// Timeout bounds every wait in actor tests. It is generous: -race on a loaded 2-core
// machine is slow, and a wait only lasts this long when the test is failing anyway.
const Timeout = 20 * time.Second

// Logger returns a logger for tests: discarded unless the test runs with -v, in which case
// warnings and errors go to the test log.
func Logger(t testing.TB) zerolog.Logger {
	if !testing.Verbose() {
		return zerolog.Nop()
	}
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
}

// Probe is an actor that forwards every user message it receives to C.
type Probe struct {
	PID *actor.PID
	C   chan any
}

// NewProbe spawns a probe in system.
func NewProbe(t testing.TB, system *actor.ActorSystem) *Probe {
	p := &Probe{C: make(chan any, 1024)}
	p.PID = system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch ctx.Message().(type) {
		case actor.SystemMessage, actor.AutoReceiveMessage:
			return
		}
		p.C <- ctx.Message()
	}))
	t.Cleanup(func() { system.Root.Stop(p.PID) })
	return p
}

// Expect waits for the next value of type T on ch, skipping values of other types, and
// fails the test after Timeout.
func Expect[T any](t testing.TB, ch <-chan any) T {
	t.Helper()
	deadline := time.After(Timeout)
	for {
		select {
		case v := <-ch:
			if m, ok := v.(T); ok {
				return m
			}
		case <-deadline:
			var zero T
			t.Fatalf("timed out waiting for %T", zero)
			return zero
		}
	}
}

// Receive waits for the next value on a typed channel and fails the test after Timeout.
func Receive[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Timeout):
		var zero T
		t.Fatalf("timed out waiting for %T", zero)
		return zero
	}
}

// ModuleRoot returns the directory of reef's go.mod, found upwards from the test's directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// WorldExecutableCopy copies the running test binary into a temporary folder that any user
// may enter and run it from, for tests that start it as another (unprivileged) user.
func WorldExecutableCopy(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	bin := filepath.Join(dir, filepath.Base(os.Args[0]))
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	return bin
}
