package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// TestE2EMigrateThenCluster: a bbolt home holds a conversation, a cron job and an approved
// pairing; `reef migrate --to postgres` copies it, and two cluster nodes take over. The
// owner's conversation continues with its context, the paired user is still let in (no
// new pairing code), and the cron job, which came due while reef was down, gets its one
// catch-up run across the cluster, not one per node. Each of the three fails the test when
// it is not carried over.
func TestE2EMigrateThenCluster(t *testing.T) {
	url := pgtest.URL(t)
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 0, nil)
	const owner, guest = 4300, 4301
	cfg := telegramYAML(tg.URL, `allowFrom: ["4300"]`) // dmPolicy pairing: reef's default
	home, e := writeConfig(t, llm.srv, cfg)

	// On bbolt: the owner talks; a stranger pairs and is approved, then talks.
	n := newNode(t, e)
	tg.UserSays(owner, owner, "remember "+tok(owner, 0))
	if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(owner), replyTo(tok(owner, 0))) }) {
		t.Fatalf("no reply on bbolt; logs:\n%s", tail(n.logs(), 4000))
	}
	tg.UserSays(guest, guest, "hello there")
	if !eventually(30*time.Second, func() bool { return len(tg.Sent(guest)) > 0 }) {
		t.Fatalf("no pairing code for the stranger; logs:\n%s", tail(n.logs(), 4000))
	}
	code := regexp.MustCompile(`approve telegram ([A-Z0-9]{8})`).FindStringSubmatch(tg.Sent(guest)[0])
	if code == nil {
		t.Fatalf("no pairing code in %q", tg.Sent(guest))
	}
	if res := reef(t, e, "", "pairing", "approve", "telegram", code[1]); res.code != 0 {
		t.Fatalf("reef pairing approve = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	tg.UserSays(guest, guest, "now "+tok(guest, 0))
	if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(guest), replyTo(tok(guest, 0))) }) {
		t.Fatalf("the approved guest got no reply on bbolt: %q", tg.Sent(guest))
	}
	n.stop()

	// A cron job, added while reef is down; its next run is moved into the past, as if reef
	// had been down when it came due (so the cluster owes it one catch-up run at once).
	cronMark := tok("cron", 0)
	add := reef(t, e, "", "cron", "add", "-name", "hourly", "-every", "1h", "-isolated", "-text", "check "+cronMark)
	id := regexp.MustCompile(`added ([0-9a-f]+)`).FindStringSubmatch(add.stdout)
	if add.code != 0 || id == nil {
		t.Fatalf("cron add = %d\n%s%s", add.code, add.stdout, add.stderr)
	}
	makeDue(t, filepath.Join(home, "data", "reef.db"), id[1])

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := command(ctx, e, "migrate", "--to", "postgres", "-url", url).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "every table's count matches") {
		t.Fatalf("reef migrate: %v\n%s", err, out)
	}

	// Two nodes: the migrated home and a new one, both on the database.
	const partitions, lease = 16, 4
	writeHome(t, home, cfg+postgresYAML(url)+clusterYAML("n1", partitions, lease))
	_, e2 := writeConfig(t, llm.srv, cfg+postgresYAML(url)+clusterYAML("n2", partitions, lease))
	n1 := n
	n1.start()
	n2 := newNode(t, e2)
	if !eventually(time.Minute, func() bool { o := leaseOwners(t, url); return o["n1"] == partitions/2 && o["n2"] == partitions/2 }) {
		t.Fatalf("partitions not spread: %v", leaseOwners(t, url))
	}

	tg.UserSays(owner, owner, "and now "+tok(owner, 1))
	tg.UserSays(guest, guest, "again "+tok(guest, 1))
	for _, c := range []struct {
		chat int64
		mark string
	}{{owner, tok(owner, 1)}, {guest, tok(guest, 1)}} {
		if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(c.chat), replyTo(c.mark)) }) {
			t.Fatalf("chat %d: no reply in the cluster, it shows %q\nn1:\n%s\nn2:\n%s", c.chat, tg.Sent(c.chat), tail(n1.logs(), 3000), tail(n2.logs(), 3000))
		}
	}
	if !eventually(30*time.Second, func() bool { return llm.requests(cronMark) > 0 }) {
		t.Errorf("the migrated cron job did not run in the cluster\nn1:\n%s", tail(n1.logs(), 3000))
	}
	// Every node re-reads the jobs within 5 s: a node firing its own copy would have by now.
	time.Sleep(7 * time.Second)
	n1.stop()
	n2.stop()

	if got := llm.requests(cronMark); got != 1 {
		t.Errorf("the cron job ran %d times across the two nodes; want once", got)
	}
	var history string
	for _, req := range llm.srv.Script().Requests() {
		if strings.Contains(lastUser(req), tok(owner, 1)) {
			for _, m := range req.Messages {
				history += m.Content + "\n"
			}
		}
	}
	if !strings.Contains(history, "remember "+tok(owner, 0)) || !strings.Contains(history, replyTo(tok(owner, 0))) {
		t.Errorf("the model's context in the cluster lacks the exchange from bbolt:\n%s", history)
	}
	// The job's run is announced to the owner's chat: once.
	got := tg.Sent(owner)
	if n := countOf(got, replyTo(cronMark)); n != 1 {
		t.Errorf("the owner's chat shows the cron job's result %d times; want once: %q", n, got)
	}
	got = slices.DeleteFunc(got, func(s string) bool { return s == replyTo(cronMark) })
	if !slices.Equal(got, []string{replyTo(tok(owner, 0)), replyTo(tok(owner, 1))}) {
		t.Errorf("the owner's chat shows %q; want the two replies once each", got)
	}
	if got := tg.Sent(guest); len(got) != 3 || got[1] != replyTo(tok(guest, 0)) || got[2] != replyTo(tok(guest, 1)) {
		t.Errorf("the guest's chat shows %q; want the pairing code and two replies (no second pairing code)", got)
	}
	checkSettledPostgres(t, url)
}

// writeHome replaces the reef.yaml of home.
func writeHome(t *testing.T, home, yaml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// makeDue moves job id's next run in the bbolt database at path a minute into the past.
func makeDue(t *testing.T, path, id string) {
	t.Helper()
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	setNextRun(t, st, id, time.Now().Add(-time.Minute))
}
