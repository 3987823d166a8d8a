package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestE2EExecOnceAcrossSIGKILL: reef is SIGKILLed while exec runs `sleep 5; echo x >> b5.log`.
// The command dies with reef (it never writes b5.log), and after the restart the run goes on
// with the call answered "interrupted" instead of running the command again; the user gets
// one answer.
func TestE2EExecOnceAcrossSIGKILL(t *testing.T) {
	const owner = int64(500)
	marker := tok("once", 0)
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		for _, m := range req.Messages {
			if m.Role == messages.RoleTool {
				return fake.Reply{Text: replyTo(marker)}
			}
		}
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "exec",
			Arguments: `{"command":"echo s >> started.log; sleep 5; echo x >> b5.log"}`}}}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	tg := telegramtest.NewWithToken(t, tgToken)
	home, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["500"]`))
	ws := filepath.Join(home, "workspace")
	lines := func(name string) int {
		b, _ := os.ReadFile(filepath.Join(ws, name))
		return strings.Count(string(b), "\n")
	}
	n := newNode(t, e)

	tg.UserSays(owner, owner, "run the slow command "+marker)
	if !eventually(30*time.Second, func() bool { return lines("started.log") == 1 }) {
		t.Fatalf("the command did not start; logs:\n%s", tail(n.logs(), 4000))
	}
	// The kill comes once the progress draft shows the call, as a person would see it: a kill
	// in the instant a draft's send is answered can leave that draft behind on Telegram, which
	// has no idempotency key (#32; BENCHMARKS.md counts those), and is not what this tests.
	shown := func() bool {
		for _, m := range tg.Messages(owner) {
			if h := m.History; len(h) > 0 && strings.Contains(h[len(h)-1], "▸ exec") {
				return true
			}
		}
		return false
	}
	if !eventually(10*time.Second, shown) {
		t.Fatalf("no progress draft shows the call: %q", tg.Sent(owner))
	}
	time.Sleep(300 * time.Millisecond) // for reef to read the send's answer
	n.kill()
	time.Sleep(6 * time.Second) // longer than the command's sleep: had it survived reef, b5.log would exist
	if got := lines("b5.log"); got != 0 {
		t.Errorf("b5.log has %d lines after reef was killed, want 0: the command outlived reef", got)
	}
	n.start()
	if !eventually(60*time.Second, func() bool { return slices.Contains(tg.Sent(owner), replyTo(marker)) }) {
		t.Fatalf("no answer after the restart: %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	time.Sleep(6 * time.Second) // a command run again would have written b5.log by now
	n.stop()

	if got := lines("started.log"); got != 1 {
		t.Errorf("the command started %d times, want 1", got)
	}
	if got := lines("b5.log"); got != 0 {
		t.Errorf("b5.log has %d lines, want 0", got)
	}
	if got := tg.Sent(owner); !slices.Equal(got, []string{replyTo(marker)}) {
		t.Errorf("the chat shows %q, want exactly one answer", got)
	}
	reqs := script.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2 (the call, then the resumed run)", len(reqs))
	}
	var result string
	for _, m := range reqs[1].Messages {
		if m.Role == messages.RoleTool && m.ToolCallID == "call_1" {
			result = m.Content
		}
	}
	if !strings.HasPrefix(result, "interrupted: reef restarted") {
		t.Errorf("the resumed run gave the model %q for the exec call, want the interrupted note", result)
	}
	checkSettled(t, home)
}
