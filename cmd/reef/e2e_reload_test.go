package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

// tgToken2 is the second fake bot's token (a canary like tgToken).
const tgToken2 = "123456:AAcanarySecondBotToken_e2e_77aa0c12"

// TestE2EReload edits reef.yaml under a running gateway: SIGHUP adds a second Telegram bot,
// which answers while the first bot's conversation goes on; an invalid edit (found by the
// file watcher) is refused, `reef status` shows why, and the old configuration keeps
// answering; `reef reload` after removing the first bot stops it while the second goes on.
func TestE2EReload(t *testing.T) {
	tg1 := telegramtest.NewWithToken(t, tgToken)
	tg2 := telegramtest.NewWithToken(t, tgToken2)
	llm := newEchoLLM(t, 0, nil)
	first := telegramYAML(tg1.URL, "dmPolicy: open", `allowFrom: ["*"]`)
	home, e := writeConfig(t, llm.srv, first)
	e["TG_WORK_BOT_TOKEN"] = tgToken2
	path := filepath.Join(home, "reef.yaml")
	n := newNode(t, e)
	answered := func(tg *telegramtest.Server, chat int64, marker string) {
		t.Helper()
		tg.UserSays(chat, chat, "hello "+marker)
		if !eventually(30*time.Second, func() bool { return slices.Contains(tg.Sent(chat), replyTo(marker)) }) {
			t.Fatalf("no reply to %s; sent %q; logs:\n%s", marker, tg.Sent(chat), tail(n.logs(), 4000))
		}
	}
	answered(tg1, 11, tok(11, 0))

	// SIGHUP after adding the account work.
	// The new bot's token comes from the environment, which reef scrubbed of credentials at
	// start (hardenProcess): the reload reads the copy it kept.
	second := first + "    accounts:\n      work:\n        botToken: ${TG_WORK_BOT_TOKEN}\n        apiRoot: " + tg2.URL + "\n"
	write(t, path, second)
	if err := n.cur.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	answered(tg2, 21, tok(21, 0))
	answered(tg1, 11, tok(11, 1)) // the first bot's conversation goes on
	if !strings.Contains(n.logs(), "channels.telegram.accounts.work added") {
		t.Errorf("the log does not say what the reload added:\n%s", tail(n.logs(), 3000))
	}

	// An invalid edit, picked up by the watcher: refused, shown, the old config runs.
	write(t, path, second+"    dmPolicy: sometimes\n")
	if !eventually(30*time.Second, func() bool { return strings.Contains(n.logs(), "config reload refused") }) {
		t.Fatalf("the watcher did not refuse the invalid edit; logs:\n%s", tail(n.logs(), 3000))
	}
	st := reef(t, e, "", "status")
	if !strings.Contains(st.stdout, "config reload REFUSED") || !strings.Contains(st.stdout, "dmPolicy") {
		t.Errorf("reef status does not show the refused reload and its reason:\n%s", st.stdout)
	}
	answered(tg1, 11, tok(11, 2))
	answered(tg2, 21, tok(21, 1))

	// reef reload after removing the first bot: the second goes on; the first is stopped.
	removed := "channels:\n  telegram:\n    dmPolicy: open\n    allowFrom: [\"*\"]\n    accounts:\n      work:\n        botToken: ${TG_WORK_BOT_TOKEN}\n" +
		"        apiRoot: " + tg2.URL + "\n"
	write(t, path, removed)
	r := reef(t, e, "", "reload")
	if r.code != 0 || !strings.Contains(r.stdout, "channels.telegram removed") {
		t.Fatalf("reef reload: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	answered(tg2, 21, tok(21, 2))
	st = reef(t, e, "", "status")
	if strings.Contains(st.stdout, "channel telegram ") || !strings.Contains(st.stdout, "channel telegram:work") {
		t.Errorf("reef status after removing the default bot:\n%s", st.stdout)
	}
	tg1.UserSays(12, 12, "anyone? "+tok(12, 0))
	n.stop()
	if got := tg1.Sent(12); len(got) != 0 {
		t.Errorf("the removed bot answered: %q", got)
	}
	if got := tg1.Sent(11); len(got) != 3 {
		t.Errorf("the first bot's chat got %d replies, want 3: %q", len(got), got)
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), tgToken, tgToken2, canary)
}

// write replaces the file at path as an editor would.
func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestE2EReloadMidConversation is #37's check: reef.yaml is edited while 50 chats wait for
// their answers (a second Telegram bot added, streaming switched off, the model changed).
// Every message is answered exactly once, the runs in flight finish on the old model, and
// the next turns use the new one.
func TestE2EReloadMidConversation(t *testing.T) {
	const chats = 50
	tg1 := telegramtest.NewWithToken(t, tgToken)
	tg2 := telegramtest.NewWithToken(t, tgToken2)
	llm := newEchoLLM(t, 100*time.Millisecond, func(m string) time.Duration {
		if strings.HasSuffix(m, "-0") {
			return 2 * time.Second // the first round is still running when the file changes
		}
		return 0
	})
	base := "agents:\n  - id: main\n    model: openai/test-model\n"
	home, e := writeConfig(t, llm.srv, base+telegramYAML(tg1.URL, "dmPolicy: open", `allowFrom: ["*"]`))
	path := filepath.Join(home, "reef.yaml")
	n := newNode(t, e)
	for c := range chats {
		tg1.UserSays(int64(100+c), int64(100+c), "first "+tok(100+c, 0))
	}
	if !eventually(60*time.Second, func() bool {
		for c := range chats {
			if llm.requests(tok(100+c, 0)) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the first round did not reach the model; logs:\n%s", tail(n.logs(), 3000))
	}
	edited := "agents:\n  - id: main\n    model: openai/second-model\n" +
		telegramYAML(tg1.URL, "dmPolicy: open", `allowFrom: ["*"]`, "streaming: {mode: \"off\"}",
			"accounts:", "  work:", "    botToken: \""+tgToken2+"\"", "    apiRoot: "+tg2.URL)
	write(t, path, edited)
	if !eventually(30*time.Second, func() bool { return strings.Contains(n.logs(), "config reloaded") }) {
		t.Fatalf("the edit was not applied; logs:\n%s", tail(n.logs(), 3000))
	}
	for _, want := range []string{"agents.main changed", "channels.telegram changed", "channels.telegram.accounts.work added"} {
		if !strings.Contains(n.logs(), want) {
			t.Errorf("the reload's log lacks %q", want)
		}
	}
	answeredAll := func(round int) bool {
		for c := range chats {
			if !slices.Contains(tg1.Sent(int64(100+c)), replyTo(tok(100+c, round))) {
				return false
			}
		}
		return true
	}
	if !eventually(60*time.Second, func() bool { return answeredAll(0) }) {
		t.Fatalf("the first round was not answered after the reload; logs:\n%s", tail(n.logs(), 3000))
	}
	for c := range chats {
		tg1.UserSays(int64(100+c), int64(100+c), "second "+tok(100+c, 1))
	}
	tg2.UserSays(900, 900, "hello work bot "+tok(900, 0))
	if !eventually(60*time.Second, func() bool {
		return answeredAll(1) && slices.Contains(tg2.Sent(900), replyTo(tok(900, 0)))
	}) {
		t.Fatalf("the second round was not answered; logs:\n%s", tail(n.logs(), 3000))
	}
	n.stop()
	for c := range chats {
		chat := int64(100 + c)
		if got, want := tg1.Sent(chat), []string{replyTo(tok(chat, 0)), replyTo(tok(chat, 1))}; !slices.Equal(got, want) {
			t.Errorf("chat %d got %q, want %q", chat, got, want)
		}
	}
	models := map[string]string{} // marker → the model it was asked of
	for _, req := range llm.srv.Script().Requests() {
		for _, m := range tokenRE.FindAllString(lastUser(req), -1) {
			models[m] = req.Model
		}
	}
	for c := range chats {
		if m := models[tok(100+c, 0)]; m != "test-model" {
			t.Errorf("chat %d's run in flight used %q, want the old model", 100+c, m)
		}
		if m := models[tok(100+c, 1)]; m != "second-model" {
			t.Errorf("chat %d's next turn used %q, want the new model", 100+c, m)
		}
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), tgToken, tgToken2, canary)
}
