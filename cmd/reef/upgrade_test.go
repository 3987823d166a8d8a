package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// The fixture testdata/upgrade/format1.db.gz is a database written by the previous release
// (commit ab5d3d3, store format 1) with the program beside it, makefixture.go.txt.
const format1Fixture = "testdata/upgrade/format1.db.gz"

// storeContents is what a test compares across an upgrade: every conversation's records
// and the named buckets (cron jobs, pairings).
type storeContents struct {
	Sessions  []persistence.SessionInfo
	Messages  map[string][]persistence.Entry
	Snapshots map[string][]persistence.Snapshot
	Inbox     map[string][]persistence.InboxItem
	KV        map[string]map[string]string
}

func readContents(t *testing.T, path string) storeContents {
	t.Helper()
	st, err := bolt.Open(path, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer st.Close()
	c := storeContents{Messages: map[string][]persistence.Entry{}, Snapshots: map[string][]persistence.Snapshot{},
		Inbox: map[string][]persistence.InboxItem{}, KV: map[string]map[string]string{}}
	err = st.View(func(r persistence.Reader) error {
		var err error
		if c.Sessions, err = r.Sessions(); err != nil {
			return err
		}
		for _, s := range c.Sessions {
			if c.Messages[s.Key], err = r.Messages(s.Key, 0); err != nil {
				return err
			}
			if c.Snapshots[s.Key], err = r.Snapshots(s.Key); err != nil {
				return err
			}
			if c.Inbox[s.Key], err = r.Inbox(s.Key); err != nil {
				return err
			}
		}
		for _, b := range []string{"cron/jobs", "cron/next", "approved/telegram", "pairing/telegram"} {
			c.KV[b] = map[string]string{}
			if err := r.Scan(b, "", func(k string, v []byte) error { c.KV[b][k] = string(v); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// storeMeta returns meta/schema and meta/needs of the database at path.
func storeMeta(t *testing.T, path string) (schema, needs string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		schema, needs = string(m.Get([]byte("schema"))), string(m.Get([]byte("needs")))
		return nil
	})
	return schema, needs
}

// TestE2EUpgradeFromTheLastRelease: the gateway opens a database the previous release wrote,
// backs it up, upgrades it to the current format with every conversation, cron job and
// pairing intact, delivers the reply that release left unsent and answers in the old
// conversation; `reef restore` of the backup rolls the database back to format 1.
func TestE2EUpgradeFromTheLastRelease(t *testing.T) {
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 0, nil)
	home, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`))
	db := filepath.Join(home, "data", "reef.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := unpackBackup(format1Fixture, db); err != nil {
		t.Fatal(err)
	}
	if schema, needs := storeMeta(t, db); schema != "1" || needs != "" {
		t.Fatalf("the fixture's meta = %q, %q; want format 1 without needs", schema, needs)
	}
	before := readContents(t, db)
	if len(before.Sessions) != 3 || len(before.KV["cron/jobs"]) != 2 || len(before.KV["approved/telegram"]) != 1 ||
		!strings.Contains(before.Messages["agent:main:telegram:direct:1001"][0].Content, "coral-17") {
		t.Fatalf("the fixture holds %d conversations, %d cron jobs, %d approved senders: not what makefixture wrote",
			len(before.Sessions), len(before.KV["cron/jobs"]), len(before.KV["approved/telegram"]))
	}

	// reef doctor says the upgrade is due and leaves the file as it is.
	if doc := reef(t, e, "", "doctor"); !strings.Contains(doc.stdout, "is in store format 1: reef upgrades it to format 2 when it next starts") {
		t.Errorf("reef doctor on the old release's database:\n%s%s", doc.stdout, doc.stderr)
	}
	if schema, _ := storeMeta(t, db); schema != "1" {
		t.Fatalf("reef doctor changed the format to %q", schema)
	}

	g := launchGateway(t, e)
	backups, _ := filepath.Glob(filepath.Join(home, "backups", "reef-before-format-2-*.db.gz"))
	if len(backups) != 1 || !strings.Contains(g.stderr.String(), "upgrading it, after a backup in "+backups[0]) {
		t.Fatalf("backups before the upgrade: %v; the log:\n%s", backups, tail(g.stderr.String(), 3000))
	}
	// The reply the old release had not confirmed goes out; the old conversation goes on.
	if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(1001), "a reply not yet confirmed sent") }) {
		t.Errorf("the old outbox's reply was not sent after the upgrade: %q", tg.Sent(1001))
	}
	tg.UserSays(1001, 1001, "please answer "+tok(1001, 1))
	if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(1001), replyTo(tok(1001, 1))) }) {
		t.Fatalf("no reply in the upgraded conversation: %q\n%s", tg.Sent(1001), tail(g.stderr.String(), 3000))
	}
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("gateway exit %d:\n%s", code, tail(g.stderr.String(), 3000))
	}

	if schema, needs := storeMeta(t, db); schema != "2" || needs != persistence.FormatRelease[2] {
		t.Errorf("after the upgrade meta = %q, %q; want \"2\", %q", schema, needs, persistence.FormatRelease[2])
	}
	after := readContents(t, db)
	for _, s := range before.Sessions {
		old, now := before.Messages[s.Key], after.Messages[s.Key]
		if len(now) < len(old) {
			t.Errorf("%s: %d messages after the upgrade, %d before", s.Key, len(now), len(old))
			continue
		}
		if d := cmp.Diff(old, now[:len(old)]); d != "" {
			t.Errorf("%s: the old messages changed (-before +after):\n%s", s.Key, d)
		}
		if d := cmp.Diff(before.Snapshots[s.Key], after.Snapshots[s.Key]); d != "" {
			t.Errorf("%s: snapshots changed:\n%s", s.Key, d)
		}
	}
	// The gateway's timer may rewrite a job's state; the jobs are the same.
	if got, want := slices.Sorted(maps.Keys(after.KV["cron/jobs"])), slices.Sorted(maps.Keys(before.KV["cron/jobs"])); !slices.Equal(got, want) {
		t.Errorf("cron jobs after the upgrade: %q; want %q", got, want)
	}
	if d := cmp.Diff(before.KV["approved/telegram"], after.KV["approved/telegram"]); d != "" {
		t.Errorf("approved senders after the upgrade (-before +after):\n%s", d)
	}
	if list := reef(t, e, "", "cron", "list"); !strings.Contains(list.stdout, "morning brief") || !strings.Contains(list.stdout, "check mail") {
		t.Errorf("reef cron list after the upgrade:\n%s%s", list.stdout, list.stderr)
	}

	// Rolling back: the backup is the old release's database, as it was.
	res := reef(t, e, "", "restore", backups[0])
	if res.code != 0 {
		t.Fatalf("reef restore %s = %d\n%s%s", backups[0], res.code, res.stdout, res.stderr)
	}
	if schema, _ := storeMeta(t, db); schema != "1" {
		t.Errorf("the restored database's format = %q; want \"1\"", schema)
	}
	if d := cmp.Diff(before, readContents(t, db)); d != "" {
		t.Errorf("the restored database differs from the old release's (-before +restored):\n%s", d)
	}
}

// TestE2ENewerStoreFormatRefused: a database a newer reef wrote is refused by the gateway,
// `reef doctor` and `reef sessions`, each naming the release to run and the way back; the
// file is left as it was.
func TestE2ENewerStoreFormatRefused(t *testing.T) {
	home, e := writeConfig(t, newFake(t), "")
	db := filepath.Join(home, "data", "reef.db")
	st, err := bolt.Open(db, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	bdb, err := bbolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	bdb.Update(func(tx *bbolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		m.Put([]byte("schema"), []byte("3"))
		return m.Put([]byte("needs"), []byte("v9.4.0"))
	})
	bdb.Close()
	fi, _ := os.Stat(db)

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	out, err := command(ctx, e, "gateway").CombinedOutput()
	if err == nil {
		t.Fatalf("reef gateway on a format-3 database exited 0:\n%s", out)
	}
	for name, r := range map[string]result{"gateway": {stderr: string(out)}, "doctor": reef(t, e, "", "doctor"), "sessions": reef(t, e, "", "sessions", "list")} {
		text := r.stdout + r.stderr
		for _, want := range []string{db + " is in store format 3", "needs reef v9.4.0 or later", "reads store formats up to 2",
			"reef version", "reef restore $REEF_HOME/backups/reef-before-format-3-"} {
			if !strings.Contains(text, want) {
				t.Errorf("reef %s does not say %q:\n%s", name, want, tail(text, 2000))
			}
		}
	}
	if schema, needs := storeMeta(t, db); schema != "3" || needs != "v9.4.0" {
		t.Errorf("meta after the refusals = %q, %q; want it untouched", schema, needs)
	}
	if fi2, _ := os.Stat(db); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("the database was written to")
	}
}
