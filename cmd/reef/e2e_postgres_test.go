package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// postgresYAML is the storage block of a reef on the PostgreSQL database at url.
func postgresYAML(url string) string {
	return fmt.Sprintf("storage:\n  driver: postgres\n  url: %q\n", url)
}

// TestE2EPostgresSingleNode: one `reef gateway` on PostgreSQL (storage.driver: postgres)
// answers Telegram chats while it is SIGKILLed twice and stopped and started once: every
// message gets exactly one reply, the database ends with nothing pending, and no reef.db is
// created. A second gateway on the same database refuses to start.
func TestE2EPostgresSingleNode(t *testing.T) {
	url := pgtest.URL(t)
	const chats, perChat = 12, 4
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 20*time.Millisecond, nil)
	home, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)+postgresYAML(url))
	n := newNode(t, e)

	// A second node on the same database is refused, as a second reef on one reef.db is.
	_, other := writeConfig(t, llm.srv, telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)+postgresYAML(url))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := command(ctx, other, "gateway").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another reef is already running on the PostgreSQL database") {
		t.Errorf("a second gateway on the database: err %v, output:\n%s", err, tail(string(out), 2000))
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var lost []string
	for c := range chats {
		chat := int64(7000 + c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perChat {
				marker := tok(chat, i)
				tg.UserSays(chat, chat, "please answer "+marker)
				if !eventually(2*time.Minute, func() bool { return slices.Contains(tg.Sent(chat), replyTo(marker)) }) {
					mu.Lock()
					lost = append(lost, marker)
					mu.Unlock()
					return
				}
			}
		}()
	}
	// Kill twice and restart cleanly once while the chats talk.
	for i, stop := range []func(){n.kill, n.kill, n.stop} {
		want := (i + 1) * chats * perChat / 4
		eventually(2*time.Minute, func() bool { return tg.Calls("sendMessage") >= want })
		stop()
		n.start()
	}
	wg.Wait()
	n.stop()

	if len(lost) > 0 {
		t.Fatalf("%d messages got no reply, e.g. %v\nlogs:\n%s", len(lost), lost[:min(10, len(lost))], tail(n.logs(), 6000))
	}
	for c := range chats {
		chat := int64(7000 + c)
		var want []string
		for i := range perChat {
			want = append(want, replyTo(tok(chat, i)))
		}
		var replies []string
		for _, m := range tg.Sent(chat) {
			if tokenRE.MatchString(m) {
				replies = append(replies, m)
			}
		}
		if !slices.Equal(replies, want) {
			t.Errorf("chat %d got replies %q; want exactly %q", chat, replies, want)
		}
	}
	if n.kills != 2 {
		t.Errorf("%d kills; want 2", n.kills)
	}
	checkSettledPostgres(t, url)
	if _, err := os.Stat(filepath.Join(home, "data", "reef.db")); err == nil {
		t.Errorf("a reef.db was created although the state is in PostgreSQL")
	}
	noSecrets(t, home, n.logs(), tgToken, canary)
}

// checkSettledPostgres checks that the PostgreSQL store holds sessions and nothing pending.
func checkSettledPostgres(t *testing.T, url string) {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var pending []string
	var sessions []persistence.SessionInfo
	if err := st.View(func(r persistence.Reader) error {
		var err error
		if pending, err = r.PendingSessions(); err != nil {
			return err
		}
		sessions, err = r.Sessions()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(pending) > 0 {
		t.Errorf("sessions with unanswered messages or unsent replies after shutdown: %v", pending)
	}
	if len(sessions) == 0 {
		t.Errorf("no session in PostgreSQL: the gateway did not keep its state there")
	}
}

// TestE2EMigrateThenContinue: a gateway on bbolt talks in a chat and is stopped; `reef
// migrate --to postgres` copies its home; the gateway started on PostgreSQL answers the next
// message of the same chat with the earlier exchange in the model's context.
func TestE2EMigrateThenContinue(t *testing.T) {
	url := pgtest.URL(t)
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 0, nil)
	cfg := telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)
	home, e := writeConfig(t, llm.srv, cfg)
	n := newNode(t, e)
	const chat = 4242
	first, second := tok(chat, 0), tok(chat, 1)
	tg.UserSays(chat, chat, "remember "+first)
	if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(chat), replyTo(first)) }) {
		t.Fatalf("no reply on bbolt; logs:\n%s", tail(n.logs(), 4000))
	}
	n.stop()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := command(ctx, e, "migrate", "--to", "postgres", "-url", url).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "every table's count matches") {
		t.Fatalf("reef migrate: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(cfg+postgresYAML(url)), 0o600); err != nil {
		t.Fatal(err)
	}
	n.start()
	tg.UserSays(chat, chat, "and now "+second)
	if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(chat), replyTo(second)) }) {
		t.Fatalf("no reply on PostgreSQL; logs:\n%s", tail(n.logs(), 4000))
	}
	n.stop()
	reqs := llm.srv.Script().Requests()
	last := reqs[len(reqs)-1]
	var history []string
	for _, m := range last.Messages {
		history = append(history, m.Content)
	}
	joined := strings.Join(history, "\n")
	if !strings.Contains(joined, "remember "+first) || !strings.Contains(joined, replyTo(first)) {
		t.Errorf("the model's context on PostgreSQL lacks the exchange from bbolt:\n%s", joined)
	}
	if got := tg.Sent(chat); !slices.Equal(got, []string{replyTo(first), replyTo(second)}) {
		t.Errorf("chat got %q; want the two replies once each", got)
	}
	checkSettledPostgres(t, url)
}
