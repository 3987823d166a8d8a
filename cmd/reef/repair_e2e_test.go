package main

import (
	"crypto/rand"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

// TestE2ERepairAnswersNothingTwice is issue #32's items 2 and 3 through the binary: 20
// Telegram chats of 3 exchanges each, the gateway stopped (or SIGKILLed), the database hurt
// (cut to a quarter, half or three quarters of its used part, or 4 KB of random bytes over a
// leaf page it uses), then `reef doctor --repair` and a new gateway. Expected, written first: the repair says per
// conversation what it kept; the new gateway sends no reply again and asks the model about
// no old message again, and edits or deletes no message it delivered before; a new message
// in every chat is answered once.
func TestE2ERepairAnswersNothingTwice(t *testing.T) {
	const chats, rounds = 20, 3
	cut := func(quarters int64) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.Truncate(path, usedSize(t, path)/4096*quarters/4*4096); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		kill bool
		hurt func(t *testing.T, path string)
	}{
		{"stopped, cut to a quarter", false, cut(1)},
		{"stopped, cut to half", false, cut(2)},
		{"stopped, cut to three quarters", false, cut(3)},
		{"killed, random bytes over a leaf page", true, func(t *testing.T, path string) {
			page := liveLeaf(t, path)
			junk := make([]byte, 4096)
			rand.Read(junk)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(junk, int64(page)*4096); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := telegramtest.NewWithToken(t, tgToken)
			llm := newEchoLLM(t, 5*time.Millisecond, nil)
			home, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`))
			n := newNode(t, e)
			before := map[int64][]telegramtest.SentMessage{} // what each chat showed before the damage
			for r := range rounds + 1 {
				if r == rounds { // after the repair
					if tc.kill {
						n.kill()
					} else {
						n.stop()
					}
					for c := range chats {
						before[int64(7000+c)] = tg.Messages(int64(7000 + c))
					}
					db := filepath.Join(home, "data", "reef.db")
					tc.hurt(t, db)
					rep := reef(t, e, "", "doctor", "--repair")
					if !strings.Contains(rep.stdout, "✓ database: repaired") || !strings.Contains(rep.stdout, "conversations:") {
						t.Fatalf("reef doctor --repair = %d\n%s%s", rep.code, rep.stdout, rep.stderr)
					}
					t.Logf("reef doctor --repair:\n%s", rep.stdout)
					n.start()
				}
				for c := range chats {
					chat := int64(7000 + c)
					tg.UserSays(chat, chat, "hello "+tok(chat, r))
				}
				for c := range chats {
					chat := int64(7000 + c)
					if !eventually(60*time.Second, func() bool { return slices.Contains(tg.Sent(chat), replyTo(tok(chat, r))) }) {
						t.Fatalf("chat %d: no reply to round %d: %q\n%s", chat, r, tg.Sent(chat), tail(n.logs(), 6000))
					}
				}
			}
			n.stop()
			for c := range chats {
				chat := int64(7000 + c)
				for r := range rounds + 1 {
					m := tok(chat, r)
					if got := countOf(tg.Sent(chat), replyTo(m)); got != 1 {
						t.Errorf("chat %d shows the reply to %s %d times, want once", chat, m, got)
					}
					if got := llm.requests(m); got != 1 {
						t.Errorf("the model was asked about %s %d times, want once", m, got)
					}
				}
				now := tg.Messages(chat)
				for i, was := range before[chat] { // delivered before the damage: never edited or deleted since
					if i >= len(now) {
						t.Fatalf("chat %d: message %d is gone", chat, was.MessageID)
					}
					if now[i].Deleted != was.Deleted || !slices.Equal(now[i].History, was.History) {
						t.Errorf("chat %d: message %d changed after the repair: %q (deleted %v), was %q", chat, was.MessageID,
							now[i].History, now[i].Deleted, was.History)
					}
				}
			}
		})
	}
}

// liveLeaf returns a leaf page the database at path uses now: the first conversation's
// transcript page that is a page of its own (not inline) and a leaf.
func liveLeaf(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	page := 0
	_ = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("sessions")).ForEachBucket(func(k []byte) error {
			msgs := tx.Bucket([]byte("sessions")).Bucket(k).Bucket([]byte("msgs"))
			if id := int(msgs.Root()); page == 0 && id != 0 && binary.NativeEndian.Uint16(b[id*4096+8:]) == 0x02 {
				page = id
			}
			return nil
		})
	})
	if page == 0 {
		t.Fatal("no transcript has a leaf page of its own")
	}
	return page
}
