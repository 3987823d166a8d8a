package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// outageFor is how long the outage tests keep the database unreachable.
const outageFor = 20 * time.Second

// outagePassword is in the database URL the gateways use (the test server trusts loopback
// and never asks for it): it must not reach a log line or reef status, whatever the outage
// makes reef say.
const outagePassword = "pw-outage-5f1c9e"

// outageRig is a database behind a TCP proxy that an outage test cuts, the Telegram fake and
// the echo model.
type outageRig struct {
	direct string // the database, for the test's own checks
	url    string // through the proxy, with a password
	proxy  *pgtest.Proxy
	tg     *telegramtest.Server
	llm    *echoLLM
}

func newOutageRig(t *testing.T) *outageRig {
	direct := pgtest.URL(t)
	proxy, url := pgtest.NewProxy(t, direct)
	url = strings.Replace(url, "postgres://reef@", "postgres://reef:"+outagePassword+"@", 1)
	return &outageRig{direct: direct, url: url, proxy: proxy, tg: telegramtest.NewWithToken(t, tgToken),
		llm: newEchoLLM(t, 300*time.Millisecond, nil)} // slow enough that runs are under way at the cut
}

// burst makes chats (numbered from first) send perChat messages each, every one after the
// reply to the one before, and returns a function that waits for the end and returns the
// markers that got no reply.
func (r *outageRig) burst(first int64, chats, perChat int) func() []string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lost []string
	for c := range chats {
		chat := first + int64(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perChat {
				marker := tok(chat, i)
				r.tg.UserSays(chat, chat, "please answer "+marker)
				if !eventually(outageFor+40*time.Second, func() bool { return slices.Contains(r.tg.Sent(chat), replyTo(marker)) }) {
					mu.Lock()
					lost = append(lost, marker)
					mu.Unlock()
					return
				}
			}
		}()
	}
	return func() []string { wg.Wait(); return lost }
}

// outage cuts the database off for outageFor once a third of the burst was answered; while
// it lasts, reef status on the gateway of e must say so.
func (r *outageRig) outage(t *testing.T, e env, replies int) {
	eventually(time.Minute, func() bool { return r.tg.Calls("sendMessage") >= replies/3 })
	stop, start := r.proxy.Cut, r.proxy.Restore
	// By hand, the outage can be a real stop of the server: REEF_OUTAGE_STOP and
	// REEF_OUTAGE_START are shell commands (pg_ctl -D DIR stop -m fast, and start).
	if stopCmd, startCmd := os.Getenv("REEF_OUTAGE_STOP"), os.Getenv("REEF_OUTAGE_START"); stopCmd != "" && startCmd != "" {
		stop, start = shell(t, stopCmd), shell(t, startCmd)
	}
	stop()
	cut := time.Now()
	var status string
	eventually(outageFor/2, func() bool {
		status = reefStatus(t, e)
		return strings.Contains(status, "storage DOWN")
	})
	if !strings.Contains(status, "storage DOWN") || strings.Contains(status, outagePassword) {
		t.Errorf("reef status during the outage:\n%s\nwant a storage DOWN line without the password", status)
	}
	t.Logf("reef status during the outage:\n%s", status)
	time.Sleep(time.Until(cut.Add(outageFor))) // the outage itself: the gateways run without their database
	start()
}

// shell returns a function that runs cmd with sh and fails the test if it fails.
func shell(t *testing.T, cmd string) func() {
	return func() {
		if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
}

// judge checks the fake's full history: every message of the burst answered exactly once,
// in order.
func (r *outageRig) judge(t *testing.T, lost []string, first int64, chats, perChat int, logs string) {
	t.Helper()
	if len(lost) > 0 {
		t.Fatalf("%d messages got no reply, e.g. %v\nlogs:\n%s", len(lost), lost[:min(10, len(lost))], tail(logs, 8000))
	}
	for c := range chats {
		chat := first + int64(c)
		var want []string
		for i := range perChat {
			want = append(want, replyTo(tok(chat, i)))
		}
		var replies []string
		for _, m := range r.tg.Sent(chat) {
			if tokenRE.MatchString(m) {
				replies = append(replies, m)
			}
		}
		if !slices.Equal(replies, want) {
			t.Errorf("chat %d got replies %q; want exactly %q", chat, replies, want)
		}
	}
	checkSettledPostgres(t, r.direct)
}

// TestE2EPostgresOutage: one `reef gateway` on PostgreSQL, reached through a TCP proxy on
// 127.0.0.1, answers a burst of Telegram chats; mid burst the proxy cuts every connection
// and refuses new ones for 20 s (the database unreachable, as when it is stopped or the
// network fails), then lets them through again. Judged by the fake's full history: every
// message answered exactly once, in order, nothing pending after; the gateway kept running,
// reef status showed the outage, and the log said it once when it began and once when it
// ended.
func TestE2EPostgresOutage(t *testing.T) {
	r := newOutageRig(t)
	const first, chats, perChat = 8000, 16, 5
	home, e := writeConfig(t, r.llm.srv, telegramYAML(r.tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)+postgresYAML(r.url))
	n := newNode(t, e)
	wait := r.burst(first, chats, perChat)
	r.outage(t, e, chats*perChat)
	lost := wait()
	if status := reefStatus(t, e); strings.Contains(status, "storage DOWN") {
		t.Errorf("reef status after the outage:\n%s", status)
	}
	n.stop()
	logs := n.logs()
	saveLogs(t, logs)
	r.judge(t, lost, first, chats, perChat, logs)
	if got := len(n.lives); got != 1 {
		t.Errorf("%d gateway processes; want the one that rode out the outage", got)
	}
	if c := strings.Count(logs, "storage unavailable"); c != 1 {
		t.Errorf("the outage's start logged %d times; want once:\n%s", c, tail(logs, 8000))
	}
	if c := strings.Count(logs, "storage is back"); c != 1 {
		t.Errorf("the outage's end logged %d times; want once:\n%s", c, tail(logs, 8000))
	}
	noSecrets(t, home, logs, tgToken, canary, outagePassword)
}

// saveLogs writes logs to $REEF_OUTAGE_LOGS/<test>.log when set, to read what reef said.
func saveLogs(t *testing.T, logs string) {
	if dir := os.Getenv("REEF_OUTAGE_LOGS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".log"), []byte(logs), 0o600)
	}
}

// reefStatus runs `reef status` against the running gateway and returns what it printed.
func reefStatus(t *testing.T, e env) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := command(ctx, e, "status").CombinedOutput()
	return string(out)
}
