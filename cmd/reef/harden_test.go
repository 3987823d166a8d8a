package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/reefgw/reef/configs"
)

// hardenEnv makes the test binary run hardenChild instead of the tests: "harden" hardens the
// process first, "control" does not.
const hardenEnv = "REEF_TEST_HARDEN"

// hardenChild is a stand-in for reef chat: it holds an API key and a bot token in its
// environment, hardens itself as runChat does, then lets a shell (as an agent's exec command
// would) try to read its environment through /proc.
func hardenChild(mode string) {
	if mode == "harden" {
		cfg := &configs.Config{Providers: map[string]configs.ProviderConfig{"openai": {APIKey: os.Getenv("OPENAI_API_KEY")}}}
		if err := hardenProcess(cfg); err != nil {
			fmt.Println("harden:", err)
		}
	}
	fmt.Printf("dumpable=%d\n", dumpableState())
	for _, k := range []string{"OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "MY_VAR"} {
		fmt.Printf("%s=%s\n", k, os.Getenv(k))
	}
	out, _ := exec.Command("/bin/sh", "-c", "cat /proc/$PPID/environ").CombinedOutput()
	fmt.Printf("environ: %s\n", strings.ReplaceAll(string(out), "\x00", " "))
}

// TestExecCannotReadReefsEnvironment: once hardened, a command of the same user cannot read
// reef's secrets from /proc/<reef>/environ, and reef's own environment no longer holds them.
// As root, the child runs as nobody, for root may read any process's environ.
func TestExecCannotReadReefsEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PR_SET_DUMPABLE and /proc/<pid>/environ are Linux's")
	}
	bin, attr := os.Args[0], &syscall.SysProcAttr{}
	if os.Getuid() == 0 {
		bin = worldExecutableCopy(t)
		attr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	const key, token = "sk-harden-canary-1234567890", "123456:harden-canary-token"
	for _, mode := range []string{"control", "harden"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Dir, cmd.SysProcAttr = "/", attr
			cmd.Env = []string{hardenEnv + "=" + mode, "PATH=/usr/bin:/bin", "OPENAI_API_KEY=" + key,
				"TELEGRAM_BOT_TOKEN=" + token, "MY_VAR=" + key, "GORACE=atexit_sleep_ms=0"}
			b, err := cmd.CombinedOutput()
			out := string(b)
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			environ := out[strings.Index(out, "environ: "):]
			if mode == "control" {
				// Without hardening the same user reads it: the test can see what it guards.
				if !strings.Contains(environ, key) || !strings.Contains(out, "dumpable=1") {
					t.Fatalf("the control child's environment was not readable:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, "dumpable=0") {
				t.Errorf("reef is still dumpable:\n%s", out)
			}
			if strings.Contains(environ, key) || strings.Contains(environ, token) || !strings.Contains(environ, "Permission denied") {
				t.Errorf("a child read reef's environment:\n%s", out)
			}
			for _, line := range []string{"OPENAI_API_KEY=\n", "TELEGRAM_BOT_TOKEN=\n", "MY_VAR=\n"} {
				if !strings.Contains(out, line) {
					t.Errorf("reef's environment still holds %s:\n%s", strings.TrimSpace(line), out)
				}
			}
		})
	}
}

// worldExecutableCopy copies this test binary where any user may run it.
func worldExecutableCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	bin := filepath.Join(dir, "reef.test")
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
