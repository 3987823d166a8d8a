package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

// TestE2ETelegramCommands: through the real binary and the Telegram wire protocol, /stop
// stops a run whose model hangs (its draft becomes "Stopped."), /status answers without a
// model call, and the next message is answered; the user's chat shows exactly that.
func TestE2ETelegramCommands(t *testing.T) {
	const owner = int64(500)
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 0, func(marker string) time.Duration {
		if marker == tok("hang", 0) {
			return time.Hour // honours cancellation
		}
		return 0
	})
	home, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, `allowFrom: ["500"]`))
	n := newNode(t, e)

	tg.UserSays(owner, owner, "a long job "+tok("hang", 0))
	if !eventually(30*time.Second, func() bool { return llm.requests(tok("hang", 0)) == 1 }) {
		t.Fatalf("the run did not reach the model; logs:\n%s", tail(n.logs(), 4000))
	}
	begin := time.Now()
	tg.UserSays(owner, owner, "/stop")
	if !eventually(30*time.Second, func() bool { return slices.Contains(tg.Sent(owner), "Stopped.") }) {
		t.Fatalf("no Stopped.: %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	t.Logf("stopped %s after /stop", time.Since(begin).Round(time.Millisecond))
	calls := llm.total()
	tg.UserSays(owner, owner, "/status")
	if !eventually(30*time.Second, func() bool { return len(tg.Sent(owner)) >= 2 }) {
		t.Fatalf("no /status answer: %q", tg.Sent(owner))
	}
	tg.UserSays(owner, owner, "hello again "+tok("after", 0))
	if !eventually(30*time.Second, func() bool { return slices.Contains(tg.Sent(owner), replyTo(tok("after", 0))) }) {
		t.Fatalf("the next message was not answered: %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	n.stop()

	got := tg.Sent(owner)
	if len(got) != 3 || got[0] != "Stopped." || !strings.HasPrefix(got[1], "Session: agent:main:telegram:direct:500") ||
		got[2] != replyTo(tok("after", 0)) {
		t.Errorf("the chat shows %q, want Stopped., the status and the answer (no stray drafts)", got)
	}
	if llm.total() != calls+1 {
		t.Errorf("%d model calls after /stop, want 1 (none for /status)", llm.total()-calls)
	}
	checkSettled(t, home)
}
