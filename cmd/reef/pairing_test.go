package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mymmrac/telego"

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

// TestDisplayNamesCannotForgeTerminalLines is issue #20's finding 7: a sender whose name
// holds an escape sequence that clears the line, a carriage return, a newline with a forged
// pairing line and a bidi override cannot rewrite what `reef pairing list`, `reef status`
// or `reef sessions show` print: the name is quoted with its controls escaped, and
// transcript text loses them.
func TestDisplayNamesCannotForgeTerminalLines(t *testing.T) {
	tg := telegramtest.New(t)
	llm := newFake(t, fake.Reply{Text: "hi \x1b[2Kthere\r\u202eekaf"})
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

	m := tg.Message(666, telego.ChatTypePrivate, 666, "hello")
	m.From.FirstName = "\x1b[2K\rMom\n  telegram  ZZZZ2345  from Mom (id 1), expires in 59m\u202e"
	m.From.LastName = ""
	tg.Queue(telego.Update{Message: m})
	notice := waitSent(t, tg, 666, 1)[0]
	code := regexp.MustCompile(`approve telegram ([A-Z0-9]{8})`).FindStringSubmatch(notice)
	if code == nil {
		t.Fatalf("no pairing code in %q", notice)
	}
	clean := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\r\u202e") {
			t.Errorf("%s printed terminal controls:\n%q", what, out)
		}
		// the name is cleaned where it arrives (access.DisplayName: controls become spaces,
		// format characters go), and quoted where it is printed
		if strings.Contains(out, "ZZZZ2345") && !strings.Contains(out, `"[2K Mom telegram ZZZZ2345 from Mom (id 1), expires in 59m"`) {
			t.Errorf("%s did not quote the odd name, cleaned, on its own line:\n%s", what, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "telegram") && strings.Contains(line, "ZZZZ2345") && !strings.Contains(line, code[1]) {
				t.Errorf("%s printed a forged pairing line: %q", what, line)
			}
		}
	}
	for _, args := range [][]string{{"pairing", "list"}, {"status"}} {
		res := reef(t, e, "", args...)
		if res.code != 0 || !strings.Contains(res.stdout, code[1]) || !strings.Contains(res.stdout, "(id 666)") {
			t.Fatalf("reef %s = %d\n%s%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
		}
		clean("reef "+strings.Join(args, " "), res.stdout)
	}
	res := reef(t, e, "", "pairing", "approve", "telegram", code[1])
	if res.code != 0 {
		t.Fatalf("reef pairing approve = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	clean("reef pairing approve", res.stdout)

	tg.UserSays(666, 666, "evil \x1b]0;title\x07text\r\u202eyes")
	waitUntil(t, "the reply after approval", func() bool { return len(tg.Sent(666)) == 2 })
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
	list := reef(t, e, "", "sessions", "list")
	clean("reef sessions list", list.stdout)
	key := regexp.MustCompile(`agent:\S+666`).FindString(list.stdout)
	if list.code != 0 || key == "" {
		t.Fatalf("reef sessions list = %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	show := reef(t, e, "", "sessions", "show", key)
	if show.code != 0 || !strings.Contains(show.stdout, "evil text yes") || !strings.Contains(show.stdout, "hi there ekaf") {
		t.Fatalf("reef sessions show = %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	clean("reef sessions show", show.stdout)
}
