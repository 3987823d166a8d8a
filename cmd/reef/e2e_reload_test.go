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
