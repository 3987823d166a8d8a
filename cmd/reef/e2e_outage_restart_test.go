package main

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/providers/fake"
)

// TestE2EModelOutageRestart: the model is down, ten Telegram chats write and are told, the
// gateway is SIGKILLed and restarted while the model is still down, then the model comes
// back. Each chat ends with the notice and exactly one answer, and no draft left showing:
// the runs that wait again after the restart leave no progress draft behind.
func TestE2EModelOutageRestart(t *testing.T) {
	tg := telegramtest.NewWithToken(t, tgToken)
	addr := freeAddr(t) // nothing listens there yet: connection refused
	yaml := telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)
	home, _ := writeConfig(t, newFake(t), yaml)
	e := env{"REEF_HOME": home, "HOME": home, "OPENAI_API_KEY": canary, "REEF_MODEL": "openai/test-model",
		"OPENAI_BASE_URL": "http://" + addr + "/v1"}
	n := newNode(t, e)

	const notice = outageNotice
	const chats = 10
	for c := range chats {
		tg.UserSays(int64(300+c), int64(300+c), "hello "+tok(300+c, 0))
	}
	told := func() bool {
		for c := range chats {
			if !slices.Contains(tg.Sent(int64(300+c)), notice) {
				return false
			}
		}
		return true
	}
	if !eventually(time.Minute, told) {
		t.Fatalf("chats were not told of the outage\n%s", tail(n.logs(), 3000))
	}
	n.restart()
	// The restarted gateway runs the waiting messages again at once (its breakers start
	// closed); they fail on the outage again and wait. Give them the time to show.
	time.Sleep(3 * time.Second)

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

	answered := func() bool {
		for c := range chats {
			if !slices.Contains(tg.Sent(int64(300+c)), replyTo(tok(300+c, 0))) {
				return false
			}
		}
		return true
	}
	if !eventually(2*time.Minute, answered) {
		t.Fatalf("not answered after the model came back\n%s", tail(n.logs(), 3000))
	}
	time.Sleep(time.Second) // a moment for a late draft to show
	n.stop()
	for c := range chats {
		chat := int64(300 + c)
		want := []string{notice, replyTo(tok(chat, 0))}
		if got := tg.Sent(chat); !slices.Equal(got, want) {
			var all []string
			for _, m := range tg.Messages(chat) {
				all = append(all, fmt.Sprintf("#%d deleted=%v %q", m.MessageID, m.Deleted, m.History))
			}
			t.Errorf("chat %d shows %q, want %q; the bot's messages: %v", chat, got, want, all)
		}
	}
	checkSettled(t, home)
}
