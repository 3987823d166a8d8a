package main

import (
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/providers/fake"
)

// outageNotice is what a chat is told while the model's server refuses connections (the
// backticks around reef doctor render as code).
const outageNotice = "The model is unreachable right now: the model's server refused the connection. " +
	"I will answer when it is back; if this lasts, the operator can run reef doctor."

// TestE2EModelOutage: `reef gateway` with the model's server not listening yet. Three
// messages in two Telegram chats each get the one notice, `reef status` shows the outage and
// the waiting messages, and once the server listens every message is answered, in order,
// once — by the gateway's own probes, without a restart.
func TestE2EModelOutage(t *testing.T) {
	tg := telegramtest.NewWithToken(t, tgToken)
	addr := freeAddr(t) // nothing listens there yet: connection refused
	yaml := telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`) + "session:\n  queue:\n    mode: followup\n"
	home, _ := writeConfig(t, newFake(t), yaml)
	e := env{"REEF_HOME": home, "HOME": home, "OPENAI_API_KEY": canary, "REEF_MODEL": "openai/test-model",
		"OPENAI_BASE_URL": "http://" + addr + "/v1"}
	n := newNode(t, e)

	const notice = outageNotice
	tg.UserSays(101, 101, "first "+tok(101, 0))
	tg.UserSays(202, 202, "only "+tok(202, 0))
	tg.UserSays(101, 101, "second "+tok(101, 1))
	told := func() bool {
		return slices.Contains(tg.Sent(101), notice) && slices.Contains(tg.Sent(202), notice)
	}
	if !eventually(time.Minute, told) {
		t.Fatalf("chats were not told of the outage: 101 got %q, 202 got %q\n%s", tg.Sent(101), tg.Sent(202), tail(n.logs(), 3000))
	}
	var status string
	shown := func() bool {
		status = reef(t, e, "", "status").stdout
		return strings.Contains(status, "model openai UNREACHABLE since") &&
			strings.Contains(status, "waiting for the model: 3 message(s) in 2 conversation(s)")
	}
	if !eventually(30*time.Second, shown) {
		t.Errorf("reef status during the outage:\n%s\nwant the outage and the 3 waiting messages", status)
	}

	script := fake.NewScript()
	script.Models = []string{"test-model"}
	script.Respond = func(req fake.Request) fake.Reply {
		marks := tokenRE.FindAllString(lastUser(req), -1)
		return fake.Reply{Text: replyTo(marks[len(marks)-1])}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the model's server cannot come back on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: fake.OpenAIHandler(script, nil)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	want := map[int64][]string{
		101: {notice, replyTo(tok(101, 0)), replyTo(tok(101, 1))},
		202: {notice, replyTo(tok(202, 0))},
	}
	answered := func() bool {
		return len(tg.Sent(101)) >= len(want[101]) && len(tg.Sent(202)) >= len(want[202])
	}
	if !eventually(2*time.Minute, answered) {
		t.Fatalf("not answered after the model came back: 101 got %q, 202 got %q\n%s", tg.Sent(101), tg.Sent(202), tail(n.logs(), 3000))
	}
	n.stop()
	for chat, w := range want {
		if got := tg.Sent(chat); !slices.Equal(got, w) {
			t.Errorf("chat %d got %q, want %q: one notice, then each message answered in order, once", chat, got, w)
		}
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), tgToken, canary)
}
