package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/providers/fake"
)

// TestPairingThroughTheControlSocket: an unknown Telegram user gets a pairing code and no
// model call; `reef status` and `reef pairing list` (talking to the running gateway) show
// it; `reef pairing approve` lets the user in.
func TestPairingThroughTheControlSocket(t *testing.T) {
	tg := telegramtest.New(t)
	llm := newFake(t, fake.Reply{Text: "hello, approved friend"})
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "channels:\n  telegram:\n    botToken: " + telegramtest.Token + "\n    apiRoot: " + tg.URL + "\n"
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e := withFake(home, llm)
	g := startGateway(t, e)

	tg.UserSays(4242, 4242, "hi, who are you?")
	notice := waitSent(t, tg, 4242, 1)[0]
	code := regexp.MustCompile(`approve telegram ([A-Z0-9]{8})`).FindStringSubmatch(notice)
	if code == nil {
		t.Fatalf("no pairing code in %q", notice)
	}
	if n := len(llm.Script().Requests()); n != 0 {
		t.Fatalf("an unknown sender caused %d model calls", n)
	}

	st := reef(t, e, "", "status")
	if st.code != 0 || !strings.Contains(st.stdout, "running") || !strings.Contains(st.stdout, code[1]) ||
		!strings.Contains(st.stdout, "channel telegram") {
		t.Fatalf("reef status = %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	if res := reef(t, e, "", "pairing", "approve", "telegram", "WRONG123"); res.code == 0 || !strings.Contains(res.stderr, "no pending pairing") {
		t.Errorf("approving a wrong code: %d %q", res.code, res.stderr)
	}
	if res := reef(t, e, "", "pairing", "approve", "telegram", strings.ToLower(code[1])); res.code != 0 || !strings.Contains(res.stdout, "approved") {
		t.Fatalf("reef pairing approve = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	tg.UserSays(4242, 4242, "and now?")
	waitUntil(t, "the reply after approval", func() bool {
		sent := tg.Sent(4242)
		return len(sent) == 2 && sent[1] == "hello, approved friend" // the run's draft became the reply
	})
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
	if res := reef(t, e, "", "pairing", "list"); res.code != 0 || !strings.Contains(res.stdout, "no pending pairing") {
		t.Errorf("reef pairing list without a gateway = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// waitSent waits until the bot sent at least n messages to chat and returns them.
func waitSent(t *testing.T, tg *telegramtest.Server, chat int64, n int) []string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if sent := tg.Sent(chat); len(sent) >= n {
			return sent
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat %d got %v, want %d messages", chat, tg.Sent(chat), n)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the fake platform
	}
}

// waitUntil polls cond until it holds, failing after 15 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the fake platform
	}
}
