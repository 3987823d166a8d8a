package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// outageFor is how long TestE2EPostgresOutage keeps the database unreachable.
const outageFor = 20 * time.Second

// TestE2EPostgresOutage: one `reef gateway` on PostgreSQL, reached through a TCP proxy on
// 127.0.0.1, answers a burst of Telegram chats; mid burst the proxy cuts every connection
// and refuses new ones for 20 s (the database unreachable, as when it is stopped or the
// network fails), then lets them through again. Judged by the fake's full history: every
// message answered exactly once, in order, nothing pending after; the gateway kept running
// and logged the outage once when it began and once when it ended.
func TestE2EPostgresOutage(t *testing.T) {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	// A password in the URL (the test server trusts loopback and never asks for it) must
	// not reach a log line, whatever the outage makes reef say.
	const password = "pw-outage-5f1c9e"
	url = strings.Replace(url, "postgres://reef@", "postgres://reef:"+password+"@", 1)
	const chats, perChat = 16, 5
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 300*time.Millisecond, nil) // slow enough that runs are under way at the cut
	home, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)+postgresYAML(url))
	n := newNode(t, e)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var lost []string
	for c := range chats {
		chat := int64(8000 + c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perChat {
				marker := tok(chat, i)
				tg.UserSays(chat, chat, "please answer "+marker)
				if !eventually(outageFor+40*time.Second, func() bool { return slices.Contains(tg.Sent(chat), replyTo(marker)) }) {
					mu.Lock()
					lost = append(lost, marker)
					mu.Unlock()
					return
				}
			}
		}()
	}
	// Mid burst, the database goes away for outageFor.
	eventually(time.Minute, func() bool { return tg.Calls("sendMessage") >= chats*perChat/3 })
	proxy.Cut()
	cutAt, cut := tg.Calls("sendMessage"), time.Now()
	// reef status says so, naming no password, while the gateway waits.
	var status string
	eventually(outageFor/2, func() bool {
		status = reefStatus(t, e)
		return strings.Contains(status, "storage DOWN")
	})
	if !strings.Contains(status, "storage DOWN") || strings.Contains(status, password) {
		t.Errorf("reef status during the outage:\n%s\nwant a storage DOWN line without the password", status)
	}
	t.Logf("reef status during the outage:\n%s", status)
	time.Sleep(time.Until(cut.Add(outageFor))) // the outage itself: the gateway runs without its database meanwhile
	during := tg.Calls("sendMessage") - cutAt
	proxy.Restore()
	wg.Wait()
	if status := reefStatus(t, e); strings.Contains(status, "storage DOWN") {
		t.Errorf("reef status after the outage:\n%s", status)
	}
	n.stop()

	logs := n.logs()
	if dir := os.Getenv("REEF_OUTAGE_LOGS"); dir != "" { // the whole log, to read what reef said
		_ = os.WriteFile(filepath.Join(dir, t.Name()+".log"), []byte(logs), 0o600)
	}
	if len(lost) > 0 {
		t.Fatalf("%d messages got no reply, e.g. %v\nlogs:\n%s", len(lost), lost[:min(10, len(lost))], tail(logs, 8000))
	}
	for c := range chats {
		chat := int64(8000 + c)
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
	if got := len(n.lives); got != 1 {
		t.Errorf("%d gateway processes; want the one that rode out the outage", got)
	}
	t.Logf("%d replies sent during the outage (replies stored before it)", during)
	checkSettledPostgres(t, direct)
	if c := strings.Count(logs, "storage unavailable"); c != 1 {
		t.Errorf("the outage's start logged %d times; want once:\n%s", c, tail(logs, 8000))
	}
	if c := strings.Count(logs, "storage is back"); c != 1 {
		t.Errorf("the outage's end logged %d times; want once:\n%s", c, tail(logs, 8000))
	}
	noSecrets(t, home, logs, tgToken, canary, password)
}

// reefStatus runs `reef status` against the running gateway and returns what it printed.
func reefStatus(t *testing.T, e env) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := command(ctx, e, "status").CombinedOutput()
	return string(out)
}
