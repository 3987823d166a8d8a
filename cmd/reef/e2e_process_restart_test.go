package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestE2EProcessStoppedByRestart: through the real binary, a background process that a
// SIGKILL of the gateway took down is reported to its session after the restart, once (the
// agent answers the event in the chat); one that a clean shutdown killed is not.
func TestE2EProcessStoppedByRestart(t *testing.T) {
	const owner = int64(510)
	script := processModel(map[string]string{"long": "sleep 300", "other": "sleep 301"})
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	tg := telegramtest.NewWithToken(t, tgToken)
	_, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["510"]`))
	n := newNode(t, e)
	const stopped = "heard: [Background process p1 was stopped by a restart: reef stopped unexpectedly while it ran]"
	count := func(prefix string) int {
		return len(slices.DeleteFunc(tg.Sent(owner), func(s string) bool { return !strings.HasPrefix(s, prefix) }))
	}
	waitSent := func(what, want string, times int) {
		t.Helper()
		if !eventually(90*time.Second, func() bool { return count(want) >= times }) {
			t.Fatalf("%s: the chat shows %q, want %q; logs:\n%s", what, tg.Sent(owner), want, tail(n.logs(), 4000))
		}
	}

	tg.UserSays(owner, owner, "run long")
	waitSent("the start", "started", 1)
	time.Sleep(500 * time.Millisecond) // the record's commit does not wait for anything: give it a moment
	n.restart()
	waitSent("the report after the restart", stopped, 1)

	n.restart() // reported once: a second restart says nothing more
	tg.UserSays(owner, owner, "run other")
	waitSent("the second start", "started", 2)
	n.stop()
	n.start()
	time.Sleep(3 * time.Second) // a report would have come by now
	n.stop()
	if got := count("heard: [Background process"); got != 1 {
		t.Errorf("the chat heard of %d stopped processes, want 1 (the one the SIGKILL stopped, not the one a clean stop killed): %q", got, tg.Sent(owner))
	}
}
