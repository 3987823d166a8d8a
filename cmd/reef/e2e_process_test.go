package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// processModel answers a chat message naming a command by running it with exec in the
// background, a tool result with "started", and the event of a finished process with the
// event's first line.
func processModel(commands map[string]string) *fake.Script {
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == messages.RoleTool:
			return fake.Reply{Text: "started"}
		case strings.Contains(last.Content, "[Background process "):
			i := strings.Index(last.Content, "[Background process ")
			line, _, _ := strings.Cut(last.Content[i:], "]")
			return fake.Reply{Text: "heard: " + line + "]"}
		}
		for word, command := range commands {
			if strings.Contains(last.Content, word) {
				args, _ := json.Marshal(map[string]any{"command": command, "background": true})
				return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_" + word, Name: "exec", Arguments: string(args)}}}
			}
		}
		return fake.Reply{Text: "?"}
	}
	return script
}

// TestE2EBackgroundProcess: through the real binary, a background command that ends by itself
// is reported to its session once (the agent answers the event in the chat); /stop kills a
// running one with the daemon it double-forked; and reef killed with SIGKILL leaves no orphan.
func TestE2EBackgroundProcess(t *testing.T) {
	const owner = int64(500)
	script := processModel(map[string]string{
		"quick":  "echo begun; sleep 1; echo finished",
		"daemon": `setsid sh -c '(sleep 300 & echo $! > daemon.pid) &'; exec sleep 300`,
		"orphan": `setsid sh -c '(sleep 300 & echo $! > orphan.pid) &'; exec sleep 300`,
	})
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	tg := telegramtest.NewWithToken(t, tgToken)
	home, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["500"]`))
	ws := filepath.Join(home, "workspace")
	n := newNode(t, e)
	sent := func() []string { return tg.Sent(owner) }
	// count counts the chat's messages that start with prefix (runtimes vary under load).
	count := func(prefix string) int {
		return len(slices.DeleteFunc(sent(), func(s string) bool { return !strings.HasPrefix(s, prefix) }))
	}
	waitSent := func(what string, want string) {
		t.Helper()
		if !eventually(90*time.Second, func() bool { return count(want) > 0 }) {
			t.Fatalf("%s: the chat shows %q, want %q; logs:\n%s", what, sent(), want, tail(n.logs(), 4000))
		}
	}

	tg.UserSays(owner, owner, "run quick")
	waitSent("the start", "started")
	waitSent("the exit event", "heard: [Background process p1 ended: exit code 0, after ")
	time.Sleep(2 * time.Second) // a second report would have arrived by now
	if got := count("heard: [Background process p1 ended"); got != 1 {
		t.Errorf("the exit was reported %d times, want once: %q", got, sent())
	}

	for _, req := range script.Requests() {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "[Background process p1 ended") &&
			(!strings.Contains(last, "<<<UNTRUSTED") || !strings.Contains(last, "begun\nfinished")) {
			t.Errorf("the event shows the output not as untrusted data: %q", last)
		}
	}

	tg.UserSays(owner, owner, "run daemon")
	pid := readPidFile(t, filepath.Join(ws, "daemon.pid"))
	tg.UserSays(owner, owner, "/stop")
	waitSent("/stop", "Killed 1 background process(es).")
	if !eventually(30*time.Second, func() bool { return processGone(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("/stop left the double-forked daemon %d running", pid)
	}

	tg.UserSays(owner, owner, "run orphan")
	pid = readPidFile(t, filepath.Join(ws, "orphan.pid"))
	n.kill()
	if !eventually(30*time.Second, func() bool { return processGone(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("reef was killed and the daemon %d of its background process lives on", pid)
	}
	n.start()
	n.stop()
	for _, s := range sent() {
		if strings.Contains(s, "p3 ended") || strings.Contains(s, "p2 ended") {
			t.Errorf("a killed process was reported: %q", s)
		}
	}
}

// readPidFile polls for a pid a command wrote.
func readPidFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	if !eventually(60*time.Second, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}) {
		t.Fatalf("no pid in %s", path)
	}
	return pid
}

// processGone reports whether pid has ended (gone, or a zombie waiting for its reaper).
func processGone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
