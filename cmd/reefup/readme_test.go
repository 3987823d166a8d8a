package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestREADMEFromScratch follows the README's offline quick start word for word, as a
// newcomer would on a fresh machine: a HOME of its own with no reef installed, the first
// command in the background, the PATH hint reefup prints followed, then the second command
// with "hello" and "ls" typed in. A command the README shows that the shell cannot find fails
// the test. (The Go build and module caches are the machine's: offline, and no rebuild of
// what the suite compiled already.)
func TestREADMEFromScratch(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := shellBlock(t, string(readme), "## Offline quick start")
	if len(lines) != 2 {
		t.Fatalf("the offline quick start shows %d commands, want 2 (fake-llm in the background, then chat): %q", len(lines), lines)
	}
	home := t.TempDir()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH: %v", err)
	}
	env := []string{"HOME=" + home, "PATH=" + filepath.Dir(goCmd) + ":/usr/bin:/bin", "GOPROXY=off", "GOTOOLCHAIN=local",
		"GOCACHE=" + goEnvOf(t, "GOCACHE"), "GOMODCACHE=" + goEnvOf(t, "GOMODCACHE"), "TMPDIR=" + os.TempDir()}

	// 1: go run ./cmd/reefup fake-llm &
	first, ok := strings.CutSuffix(strings.TrimSpace(lines[0]), "&")
	if !ok {
		t.Fatalf("the first command %q does not run in the background", lines[0])
	}
	server := exec.Command("sh", "-c", "exec "+first)
	var out, errOut syncBuffer
	server.Dir, server.Env, server.Stdout, server.Stderr = root, env, &out, &errOut
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run's child too is stopped at the end
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { server.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-server.Process.Pid, syscall.SIGTERM)
		<-exited
	})
	paste := ""
	deadline := time.Now().Add(15 * time.Minute) // the first build
	for paste == "" {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, " reef chat") {
				paste = strings.TrimSpace(l)
			}
		}
		select {
		case <-exited:
			t.Fatalf("%q exited before it printed a line to paste:\nstdout:\n%s\nstderr:\n%s", first, out.String(), errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q printed no line to paste:\nstdout:\n%s\nstderr:\n%s", first, out.String(), errOut.String())
		}
		time.Sleep(100 * time.Millisecond) // bounded polling of the child's output
	}
	stderr := errOut.String()
	if !strings.HasPrefix(stderr, "reefup: building reef") {
		t.Errorf("reefup did not say first that it builds: %q", stderr)
	}
	bin := filepath.Join(home, "go", "bin")
	if !strings.Contains(stderr, `export PATH="$PATH:`+bin+`"`) {
		t.Fatalf("reefup did not say how to put %s on PATH:\n%s", bin, stderr)
	}
	env[1] += ":" + bin // the reader follows the hint

	// 2: OPENAI_BASE_URL=http://127.0.0.1:8089/v1 REEF_MODEL=openai/fake reef chat — or, when
	// 8089 was taken, the line fake-llm printed (the README says to paste it).
	second := strings.TrimSpace(lines[1])
	if !strings.Contains(paste, "127.0.0.1:8089/") {
		second = paste
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	chat := exec.CommandContext(ctx, "sh", "-c", second)
	chat.Dir, chat.Env, chat.Stdin = root, env, strings.NewReader("hello\nls\n")
	var chatOut, chatErr bytes.Buffer
	chat.Stdout, chat.Stderr = &chatOut, &chatErr
	err = chat.Run()
	if code := chat.ProcessState.ExitCode(); code == 127 {
		t.Fatalf("%q: a command was not found:\n%s", second, chatErr.String())
	} else if err != nil {
		t.Fatalf("%q: %v\nstdout:\n%s\nstderr:\n%s", second, err, chatOut.String(), chatErr.String())
	}
	for _, want := range []string{"Hello! I am reef's fake model", "Done. ls said"} {
		if !strings.Contains(chatOut.String(), want) {
			t.Errorf("reef chat's answers lack %q:\n%s\nstderr:\n%s", want, chatOut.String(), chatErr.String())
		}
	}
}

// shellBlock returns the commands of the first ```sh block after heading, without comments.
func shellBlock(t *testing.T, md, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n"+heading)
	if !ok {
		t.Fatalf("README.md has no %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("no ```sh block under %q", heading)
	}
	block, _, _ := strings.Cut(rest, "```")
	var cmds []string
	for _, l := range strings.Split(block, "\n") {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

func goEnvOf(t *testing.T, name string) string {
	t.Helper()
	v, err := goEnv(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
