package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// lastUser returns the text of the last user message of a request.
func lastUser(req fake.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == messages.RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

func TestChatPipedLinesGetRepliesInOrder(t *testing.T) {
	tests := []struct {
		name    string
		stdin   string
		replies []string
		asked   []string // the user text each request ends with
	}{
		{"one line", "hello\n", []string{"Hi! How can I help?"}, []string{"hello"}},
		{"two lines", "hello\nwhat time is it?\n", []string{"first reply", "second reply"}, []string{"hello", "what time is it?"}},
		{"blank lines and no final newline", "\n  \nonly line", []string{"the reply"}, []string{"only line"}},
		{"no input", "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var script []fake.Reply
			for _, r := range tt.replies {
				script = append(script, fake.Reply{Text: r})
			}
			srv := newFake(t, script...)
			home := newHome(t)
			res := reef(t, withFake(home, srv), tt.stdin, "chat")
			if res.code != 0 {
				t.Fatalf("exit code %d, want 0; stderr:\n%s", res.code, res.stderr)
			}
			want := ""
			for _, r := range tt.replies {
				want += r + "\n"
			}
			if res.stdout != want {
				t.Errorf("stdout = %q, want only the replies %q", res.stdout, want)
			}
			if res.stderr != "" {
				t.Errorf("stderr = %q, want nothing in script mode", res.stderr)
			}
			reqs := srv.Script().Requests()
			if len(reqs) != len(tt.asked) {
				t.Fatalf("the model got %d requests, want %d", len(reqs), len(tt.asked))
			}
			for i, req := range reqs {
				if req.Model != "test-model" {
					t.Errorf("request %d model %q, want test-model", i, req.Model)
				}
				if got := lastUser(req); !strings.HasSuffix(strings.TrimSpace(got), tt.asked[i]) {
					t.Errorf("request %d ends with user message %q, want it to end with %q", i, got, tt.asked[i])
				}
			}
			if _, err := os.Stat(filepath.Join(home, "logs", "reef.log")); err != nil {
				t.Errorf("no log file: %v", err)
			}
			noCanary(t, home, srv, res.stdout, res.stderr)
		})
	}
}

func TestChatContinuesTheConversationAcrossRuns(t *testing.T) {
	srv := newFake(t,
		fake.Reply{Text: "Nice to meet you, Ann."},
		fake.Reply{Text: "Your name is Ann."})
	home := newHome(t)
	e := withFake(home, srv)

	first := reef(t, e, "my name is Ann\n", "chat")
	if first.code != 0 || first.stdout != "Nice to meet you, Ann.\n" {
		t.Fatalf("first run: exit %d, stdout %q; stderr:\n%s", first.code, first.stdout, first.stderr)
	}
	second := reef(t, e, "what is my name?\n", "chat")
	if second.code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", second.code, second.stderr)
	}
	// Only the new reply: the first one was marked sent and must not be shown again.
	if second.stdout != "Your name is Ann.\n" {
		t.Errorf("second run stdout = %q, want only its own reply", second.stdout)
	}
	reqs := srv.Script().Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	var sawUser, sawAssistant bool
	for _, m := range reqs[1].Messages {
		sawUser = sawUser || m.Role == messages.RoleUser && strings.Contains(m.Content, "my name is Ann")
		sawAssistant = sawAssistant || m.Role == messages.RoleAssistant && m.Content == "Nice to meet you, Ann."
	}
	if !sawUser || !sawAssistant {
		t.Errorf("second request lacks the first exchange (user seen %v, assistant seen %v): %+v", sawUser, sawAssistant, reqs[1].Messages)
	}
	if got := lastUser(reqs[1]); !strings.Contains(got, "what is my name?") {
		t.Errorf("second request ends with %q, want the new question", got)
	}
	noCanary(t, home, srv, first.stdout, first.stderr, second.stdout, second.stderr)
}

func TestChatRunsAToolCall(t *testing.T) {
	srv := newFake(t,
		fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "write", Arguments: `{"path":"hello.txt","content":"hi"}`}}},
		fake.Reply{Text: "I wrote hello.txt for you."})
	home := newHome(t)
	res := reef(t, withFake(home, srv), "please write hi to hello.txt\n", "chat")
	if res.code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", res.code, res.stderr)
	}
	if res.stdout != "I wrote hello.txt for you.\n" {
		t.Errorf("stdout = %q, want only the final reply", res.stdout)
	}
	got, err := os.ReadFile(filepath.Join(home, "workspace", "hello.txt"))
	if err != nil || string(got) != "hi" {
		t.Errorf("workspace/hello.txt = %q, %v; want %q", got, err, "hi")
	}
	reqs := srv.Script().Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2 (the call, then its result)", len(reqs))
	}
	if !slices.Contains(reqs[0].Tools, "write") {
		t.Errorf("tools offered %v, want write among them", reqs[0].Tools)
	}
	var result *messages.ChatMessage
	for i, m := range reqs[1].Messages {
		if m.Role == messages.RoleTool && m.ToolCallID == "call_1" {
			result = &reqs[1].Messages[i]
		}
	}
	if result == nil || result.IsError {
		t.Errorf("second request has no successful result for call_1: %+v", reqs[1].Messages)
	}
	noCanary(t, home, srv, res.stdout, res.stderr)
}

func TestChatWithoutProviderExplainsWhatToSet(t *testing.T) {
	home := newHome(t)
	res := reef(t, env{"REEF_HOME": home}, "hello\n", "chat")
	if res.code == 0 {
		t.Fatalf("exit code 0 without a provider; stderr:\n%s", res.stderr)
	}
	for _, want := range []string{"OPENAI_API_KEY", "Ollama", "OPENAI_BASE_URL=http://127.0.0.1:11434/v1"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if res.stdout != "" {
		t.Errorf("stdout = %q, want nothing", res.stdout)
	}
}

func TestChatShowsAFailedRunAndGoesOn(t *testing.T) {
	// The key is rejected for the first line; the second line is answered. The script is
	// told through the exit status and stderr that a run failed.
	srv := newFake(t, fake.Reply{Status: 401}, fake.Reply{Text: "back again"})
	home := newHome(t)
	res := reef(t, withFake(home, srv), "one\ntwo\n", "chat")
	if res.code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", res.code, res.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "rejected") || lines[1] != "back again" {
		t.Errorf("stdout = %q, want a short failure notice, then the second reply", res.stdout)
	}
	// Why it failed goes to stderr in one line, the detail to the log file.
	if want := "reef: the run failed: providers: failover (tried openai/test-model): openai: provider rejected the key: Incorrect API key provided: [redacted].\n"; res.stderr != want {
		t.Errorf("stderr = %q, want %q", res.stderr, want)
	}
	if log, err := os.ReadFile(filepath.Join(home, "logs", "reef.log")); err != nil || !strings.Contains(string(log), "run failed") {
		t.Errorf("log file (%v) does not record the failed run:\n%s", err, log)
	}
	noCanary(t, home, srv, res.stdout, res.stderr)
}

func TestChatStoppedMidRunAnswersTheLineNextTime(t *testing.T) {
	srv := newFake(t, fake.Reply{Hang: true}, fake.Reply{Text: "answer to one"}, fake.Reply{Text: "answer to two"})
	home := newHome(t)
	e := withFake(home, srv)

	// First run: the model hangs; SIGTERM stops reef cleanly.
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := command(ctx, e, "chat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "one\n")
	deadline := time.Now().Add(15 * time.Second)
	for len(srv.Script().Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no model request within 15s; stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the fake's record
	}
	stopped := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reef chat after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
	if d := time.Since(stopped); d > 5*time.Second {
		t.Errorf("reef chat took %v to stop", d)
	}
	if stdout.String() != "" {
		t.Errorf("stdout = %q, want nothing: the run was stopped", stdout.String())
	}
	checkDatabase(t, home)

	// Second run: the accepted line "one" is answered first, then "two", and reef waits
	// for both before it exits.
	res := reef(t, e, "two\n", "chat")
	if res.code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if want := "answer to one\nanswer to two\n"; res.stdout != want {
		t.Errorf("second run stdout = %q, want %q", res.stdout, want)
	}
	noCanary(t, home, srv, stdout.String(), stderr.String(), res.stdout, res.stderr)
}

func TestChatExecDoesNotSeeTheAPIKey(t *testing.T) {
	srv := newFake(t,
		fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "exec",
			Arguments: `{"command":"echo \"key=[$OPENAI_API_KEY] copy=[$KEY_COPY]\"; set"}`}}},
		fake.Reply{Text: "done"})
	home := newHome(t)
	e := withFake(home, srv)
	e["KEY_COPY"] = canary // a name exec cannot know as secret: only the configured key's value tells
	res := reef(t, e, "show me your environment\n", "chat")
	if res.code != 0 || res.stdout != "done\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := srv.Script().Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	var result string
	for _, m := range reqs[1].Messages {
		if m.Role == messages.RoleTool && m.ToolCallID == "call_1" {
			result = m.Content
		}
	}
	if !strings.Contains(result, "key=[] copy=[]") {
		t.Errorf("exec result %q, want the command to have run without OPENAI_API_KEY and KEY_COPY", result)
	}
	noCanary(t, home, srv, res.stdout, res.stderr)
}
