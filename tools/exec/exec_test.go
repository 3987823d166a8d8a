package exec

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/tools"
)

// TestMain lets the test binary serve as `reef exec-sandbox`, the helper the tool runs.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "exec-sandbox" {
		os.Exit(SandboxMain(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 2 && os.Args[1] == "dial-unix" { // a control-socket client for hide_linux_test.go
		os.Exit(dialUnix(os.Args[2]))
	}
	os.Exit(m.Run())
}

// helper is Config.Helper for tests: this test binary.
func helper() []string { return []string{os.Args[0], "exec-sandbox"} }

func workspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func args(kv ...any) []byte {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

// run calls the tool with ctx and fails the test if it has not returned within limit.
func run(t *testing.T, ctx context.Context, tool tools.Tool, ws string, raw []byte, limit time.Duration) tools.Result {
	t.Helper()
	done := make(chan tools.Result, 1)
	go func() { done <- tools.Run(ctx, tool, tools.Call{ID: "c1", Args: raw, Env: tools.Env{Workspace: ws}}) }()
	select {
	case res := <-done:
		return res
	case <-time.After(limit):
		t.Fatalf("exec did not return within %v", limit)
		return tools.Result{}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gone reports whether pid no longer runs: it does not exist or is a zombie waiting for init.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// readPid polls for a pid the command wrote to a file.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, "pid file "+filepath.Base(path), func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

func TestExec(t *testing.T) {
	ws := workspace(t)
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     Config
		args    []byte
		want    string // exact content
		isError bool
	}{
		{name: "stdout and stderr", args: args("command", "echo out; echo err >&2"), want: "out\nerr\nexit code 0"},
		{name: "exit code", args: args("command", "echo failing; exit 3"), want: "failing\nexit code 3", isError: true},
		{name: "no output", args: args("command", "true"), want: "(no output)\nexit code 0"},
		{name: "no trailing newline", args: args("command", "printf abc"), want: "abc\nexit code 0"},
		{name: "stdin is empty", args: args("command", "cat; echo done"), want: "done\nexit code 0"},
		{name: "runs in the workspace", args: args("command", "pwd"), want: ws + "\nexit code 0"},
		{name: "workdir", args: args("command", "pwd", "workdir", "sub"), want: filepath.Join(ws, "sub") + "\nexit code 0"},
		{name: "absolute workdir inside", args: args("command", "pwd", "workdir", filepath.Join(ws, "sub")),
			want: filepath.Join(ws, "sub") + "\nexit code 0"},
		{name: "killed by a signal", args: args("command", "kill -TERM $$"), want: "(no output)\nkilled by signal terminated", isError: true},
		{name: "output cap keeps head and tail", cfg: Config{MaxOutput: 20}, args: args("command", "printf '0123456789abcdefghijKLMNOPQRST'"),
			want: "0123456789\n[... 10 bytes omitted ...]\nKLMNOPQRST\nexit code 0"},
	}
	for _, helped := range []bool{false, true} {
		for _, tt := range tests {
			name := tt.name
			if helped {
				name += " via the helper"
				tt.cfg.Helper = helper()
			}
			t.Run(name, func(t *testing.T) {
				res := run(t, context.Background(), New(tt.cfg), ws, tt.args, 30*time.Second)
				if res.Content != tt.want || res.IsError != tt.isError {
					t.Errorf("got %q (error %v), want %q (error %v)", res.Content, res.IsError, tt.want, tt.isError)
				}
			})
		}
	}
}

func TestExecBadCalls(t *testing.T) {
	ws := workspace(t)
	outside := workspace(t)
	if err := os.Symlink(outside, filepath.Join(ws, "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(outside, "ran")
	cmd := "touch " + marker
	tests := []struct {
		name string
		ws   string
		args []byte
		err  string
	}{
		{"workdir dot dot", ws, args("command", cmd, "workdir", ".."), "path escapes the workspace"},
		{"workdir absolute outside", ws, args("command", cmd, "workdir", outside), "path escapes the workspace"},
		{"workdir tilde", ws, args("command", cmd, "workdir", "~"), "path escapes the workspace"},
		{"workdir symlink out", ws, args("command", cmd, "workdir", "out-link"), "path escapes the workspace"},
		{"workdir missing", ws, args("command", cmd, "workdir", "nope"), "no such file or directory: nope"},
		{"workdir is a file", ws, args("command", cmd, "workdir", "file"), "not a folder"},
		{"no command", ws, args("workdir", "."), "command is required"},
		{"blank command", ws, args("command", "  "), "command is required"},
		{"negative timeout", ws, args("command", cmd, "timeout", -1), "timeout must be a positive"},
		{"unknown argument", ws, args("command", cmd, "cwd", "."), `unknown argument "cwd"; accepted: command, timeout, workdir`},
		{"malformed", ws, []byte(`{"command": "touch`), "arguments are not valid JSON"},
		{"no workspace", "", args("command", cmd), "no workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, context.Background(), New(Config{}), tt.ws, tt.args, 30*time.Second)
			if !res.IsError || !strings.Contains(res.Content, tt.err) {
				t.Errorf("got %q (error %v), want an error containing %q", res.Content, res.IsError, tt.err)
			}
		})
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("a refused call ran its command (stat err %v)", err)
	}
}

func TestExecTimeoutKillsGroup(t *testing.T) {
	ws := workspace(t)
	cfg := Config{MaxTimeout: 500 * time.Millisecond} // the call asks for more and is capped
	start := time.Now()
	res := run(t, context.Background(), New(cfg), ws,
		args("command", "echo begun; sleep 60 & echo $! > grandchild.pid; sleep 60", "timeout", 100), 20*time.Second)
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("took %v to return after a 0.5s timeout", elapsed)
	}
	if !res.IsError || !strings.Contains(res.Content, "timed out after 0.5s; the process group was killed") {
		t.Errorf("got %q (error %v), want a timeout error", res.Content, res.IsError)
	}
	if !strings.HasPrefix(res.Content, "begun\n") {
		t.Errorf("got %q, want the output so far first", res.Content)
	}
	pid := readPid(t, filepath.Join(ws, "grandchild.pid"))
	waitFor(t, "the background sleep to die", func() bool { return gone(pid) })
}

func TestExecCancelStopsPromptly(t *testing.T) {
	ws := workspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() {
		done <- tools.Run(ctx, New(Config{}), tools.Call{Env: tools.Env{Workspace: ws},
			Args: args("command", "sleep 60 & echo $! > grandchild.pid; sleep 60")})
	}()
	pid := readPid(t, filepath.Join(ws, "grandchild.pid"))
	cancel()
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(res.Content, "cancelled; the process group was killed") {
			t.Errorf("got %q (error %v), want a cancellation error", res.Content, res.IsError)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("exec did not return after its context was cancelled")
	}
	waitFor(t, "the background sleep to die", func() bool { return gone(pid) })
}

// TestExecEscapedChildDoesNotHang: a process that leaves the group but keeps the output pipe
// open must not keep the call waiting.
func TestExecEscapedChildDoesNotHang(t *testing.T) {
	setsid, err := osexec.LookPath("setsid")
	if err != nil {
		t.Skip("setsid is not installed")
	}
	ws := workspace(t)
	res := run(t, context.Background(), New(Config{}), ws,
		args("command", setsid+" sh -c 'echo $$ > escaped.pid; exec sleep 60' & echo started"), 20*time.Second)
	pid := readPid(t, filepath.Join(ws, "escaped.pid"))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if !strings.HasPrefix(res.Content, "started\nexit code 0") {
		t.Errorf("got %q, want the output and exit code 0", res.Content)
	}
}

func TestExecSecretsNotInEnv(t *testing.T) {
	canaries := map[string]string{
		"REEF_CANARY":        "canary-reef-1",
		"reef_lower":         "canary-reef-2",
		"MY_SERVICE_API_KEY": "canary-apikey",
		"GITHUB_TOKEN":       "canary-token",
		"Some_Secret":        "canary-secret",
		"DB_PASSWORD":        "canary-password",
		"OPENAI_API_KEY":     "canary-openai",
		"ANTHROPIC_API_KEY":  "canary-anthropic",
		"TELEGRAM_BOT_TOKEN": "canary-telegram",
		"FEISHU_APP_SECRET":  "canary-feishu",
		"INNOCENT_LOOKING":   "prefix-canary-held-by-reef-suffix",
	}
	for k, v := range canaries {
		t.Setenv(k, v)
	}
	t.Setenv("KEEP_ME", "visible-value")
	ws := workspace(t)
	tool := New(Config{Secrets: []string{"canary-held-by-reef", ""}})
	res := run(t, context.Background(), tool, ws, args("command", "env"), 30*time.Second)
	if res.IsError {
		t.Fatalf("env failed: %q", res.Content)
	}
	for k, v := range canaries {
		if strings.Contains(res.Content, v) || strings.Contains(res.Content, k+"=") {
			t.Errorf("%s reached the child's environment", k)
		}
	}
	if !strings.Contains(res.Content, "KEEP_ME=visible-value") {
		t.Errorf("an ordinary variable was removed; env printed %q", res.Content)
	}
}

func TestFilterEnv(t *testing.T) {
	in := []string{"PATH=/bin", "HOME=/root", "TOKEN=x", "my_token=y", "X=has-s3cret-inside", "NOEQUALS", "=bare", "TOKENIZER=ok"}
	got := strings.Join(FilterEnv(in, []string{"s3cret"}), " ")
	if want := "PATH=/bin HOME=/root TOKENIZER=ok"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSpec(t *testing.T) {
	spec := New(Config{}).Spec()
	var schema struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
		Additional bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatalf("parameters are not JSON: %v", err)
	}
	if spec.Name != "exec" || schema.Additional || len(schema.Required) != 1 || len(schema.Properties) != 3 {
		t.Errorf("unexpected spec %s %s", spec.Name, spec.Parameters)
	}
	if !strings.Contains(schema.Properties["timeout"]["description"].(string), "Default 120, at most 1800") {
		t.Errorf("timeout description %q does not give the limits", schema.Properties["timeout"]["description"])
	}
}
