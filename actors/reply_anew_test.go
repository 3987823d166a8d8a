package actors_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/testutil"
)

// botHistory returns the texts each message of the bot in chat ever showed, and which are
// deleted now.
func botHistory(srv *telegramtest.Server, chat int64) (shown []string, all [][]string, deleted []bool) {
	for _, m := range srv.Messages(chat) {
		if !m.Deleted {
			shown = append(shown, m.Text)
		}
		all, deleted = append(all, m.History), append(deleted, m.Deleted)
	}
	return shown, all, deleted
}

// TestReplyInARowNotPaced: a chat's second reply comes while an edit in the chat would wait
// for Telegram's per-chat pace (one edit a second; the clock stands still, so it always
// would). It is sent as its own message with its text, not as a "…" draft edited a second
// later, and Telegram refuses nothing. Before, the second reply waited for the chat's pace
// (#40: the 20 × 10 burst's p99 of a second; here it never came).
func TestReplyInARowNotPaced(t *testing.T) {
	srv := telegramtest.New(t)
	srv.LimitEdits(time.Second)
	clock := testutil.NewClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	db, journals := filepath.Join(t.TempDir(), "reef.db"), t.TempDir()
	const chat = 44
	startDraftGatewayOn(t, clock, telegramBot(t, srv), db, journals, nil, "the answer 1", "the answer 2")
	srv.UserSays(chat, chat, "one")
	until(t, "the first answer", func() bool { return strings.Contains(strings.Join(srv.Sent(chat), "|"), "the answer 1") })
	srv.UserSays(chat, chat, "two")
	until(t, "the second answer", func() bool { return strings.Contains(strings.Join(srv.Sent(chat), "|"), "the answer 2") })
	shown, all, _ := botHistory(srv, chat)
	if strings.Join(shown, "|") != "the answer 1|the answer 2" {
		t.Errorf("the chat shows %q from the bot, want the two answers", shown)
	}
	if got := all[len(all)-1]; len(got) != 1 || got[0] != "the answer 2" {
		t.Errorf("the second answer's message showed %q, want only the answer (sent as itself)", got)
	}
	if n := srv.RateLimited(); n > 0 {
		t.Errorf("%d edits refused by the per-chat limit", n)
	}
}

// TestReplyAnewFoundAfterKill: reef is killed in the instant after Telegram took a reply sent
// as its own message (TestReplyInARowNotPaced) and before reef read its id. After the
// restart the reply is delivered again, and the message the kill left is found and kept as
// the reply: the user sees it once, never edited nor deleted, and the draft the resend sent
// to find it goes. A plain sweep would delete it as a stray and show the reply a second
// time in the new draft.
func TestReplyAnewFoundAfterKill(t *testing.T) {
	srv := telegramtest.New(t)
	srv.LimitEdits(time.Second)
	clock := testutil.NewClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	db, journals := filepath.Join(t.TempDir(), "reef.db"), t.TempDir()
	const chat = 45
	store := &killStore{kill: func(string, string, []byte) bool { return false }}
	bot := &lossyBot{Bot: telegramBot(t, srv), dies: func() { store.dead.Store(true) }}
	stop := startDraftGatewayOn(t, clock, bot, db, journals, store.wrapOnce(), "the answer 1", "the answer 2")
	srv.UserSays(chat, chat, "one")
	until(t, "the first answer", func() bool { return strings.Contains(strings.Join(srv.Sent(chat), "|"), "the answer 1") })
	bot.lose.Store(true)
	srv.UserSays(chat, chat, "two")
	until(t, "the kill", bot.dead.Load)
	stop()
	if _, all, _ := botHistory(srv, chat); len(all) != 2 || strings.Join(all[1], "|") != "the answer 2" {
		t.Fatalf("before the restart the bot's messages showed %q, want the first answer and the second sent as itself", all)
	}

	srv.LimitEdits(time.Second) // counted from here: the first process's pace is not the next one's
	startDraftGateway(t, telegramBot(t, srv), db, journals, nil)
	until(t, "the resend's draft deleted", func() bool {
		shown, all, _ := botHistory(srv, chat)
		return len(all) > 2 && !strings.Contains(strings.Join(shown, "|"), "…")
	})
	shown, all, deleted := botHistory(srv, chat)
	if strings.Join(shown, "|") != "the answer 1|the answer 2" {
		t.Errorf("the chat shows %q from the bot, want the two answers", shown)
	}
	for i, h := range all {
		if strings.Contains(strings.Join(h, "|"), "the answer 2") && (len(h) != 1 || deleted[i]) {
			t.Errorf("message %d showed %q (deleted %v): the delivered reply was touched", i, h, deleted[i])
		}
	}
	if n := srv.RateLimited(); n > 0 {
		t.Errorf("%d edits refused by the per-chat limit", n)
	}
}
