package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/testutil"
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
		bin = testutil.WorldExecutableCopy(t)
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
