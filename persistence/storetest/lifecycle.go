package storetest

import (
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

func testPendingSessions(t *testing.T, s persistence.Store) {
	var in, out uint64
	update(t, s, func(tx persistence.Tx) error {
		var err error
		in, err = tx.AppendInbox("c-inbox", inbound("x"))
		must(t, err)
		out, err = tx.AppendOutbox("a-outbox", outbound("y"))
		must(t, err)
		_, err = tx.AppendInbox("b-both", inbound("x"))
		must(t, err)
		_, err = tx.AppendOutbox("b-both", outbound("y"))
		must(t, err)
		_, err = tx.AppendMessages("d-msgs", msg(messages.RoleUser, "only a transcript"))
		must(t, err)
		return tx.PutSession(info("e-info"))
	})
	checkPending(t, s, []string{"a-outbox", "b-both", "c-inbox"})
	update(t, s, func(tx persistence.Tx) error {
		must(t, tx.DeleteInbox("c-inbox", in))
		return tx.DeleteOutbox("a-outbox", out)
	})
	checkPending(t, s, []string{"b-both"})
}

func checkPending(t *testing.T, s persistence.Store, want []string) {
	t.Helper()
	view(t, s, func(r persistence.Reader) error {
		got, err := r.PendingSessions()
		must(t, err)
		if d := diff(want, got); d != "" {
			t.Errorf("PendingSessions (-want +got):\n%s", d)
		}
		return nil
	})
}

func testDedup(t *testing.T, s persistence.Store) {
	update(t, s, func(tx persistence.Tx) error {
		for _, tc := range []struct {
			id   string
			at   time.Time
			want bool
		}{
			{"telegram:1", base, true},
			{"telegram:1", base.Add(time.Hour), false},
			{"telegram:2", base.Add(2 * time.Hour), true},
			{"discord:1", base.Add(3 * time.Hour), true},
			{"discord:1", base, false}, // a later sighting with an older time keeps the first
		} {
			got, err := tx.MarkSeen(tc.id, tc.at)
			must(t, err)
			if got != tc.want {
				t.Errorf("MarkSeen(%q, %v) = %v; want %v", tc.id, tc.at, got, tc.want)
			}
		}
		return nil
	})
	checkSeen(t, s, map[string]bool{"telegram:1": true, "telegram:2": true, "discord:1": true, "feishu:1": false})
	update(t, s, func(tx persistence.Tx) error {
		n, next, err := tx.PruneSeen(base.Add(2*time.Hour), "", 0) // strictly before the cutoff goes
		must(t, err)
		if n != 1 || next != "" {
			t.Errorf("PruneSeen removed %d, next %q; want 1 and the end", n, next)
		}
		return nil
	})
	checkSeen(t, s, map[string]bool{"telegram:1": false, "telegram:2": true, "discord:1": true})
	update(t, s, func(tx persistence.Tx) error {
		if ok, err := tx.MarkSeen("telegram:1", base); !ok || err != nil {
			t.Errorf("MarkSeen after prune = %v, %v; want true, nil", ok, err)
		}
		// In batches of two ids: discord:1 and telegram:1, then telegram:2.
		n, next, err := tx.PruneSeen(base.Add(24*time.Hour), "", 2)
		must(t, err)
		if n != 2 || next != "telegram:2" {
			t.Errorf("PruneSeen(all, 2 ids) removed %d, next %q; want 2 and telegram:2", n, next)
		}
		n, next, err = tx.PruneSeen(base.Add(24*time.Hour), next, 2)
		must(t, err)
		if n != 1 || next != "" {
			t.Errorf("PruneSeen(all, from telegram:2) removed %d, next %q; want 1 and the end", n, next)
		}
		return nil
	})
	checkSeen(t, s, map[string]bool{"telegram:1": false, "telegram:2": false, "discord:1": false})
}

func checkSeen(t *testing.T, s persistence.Store, want map[string]bool) {
	t.Helper()
	view(t, s, func(r persistence.Reader) error {
		for id, w := range want {
			got, err := r.Seen(id)
			must(t, err)
			if got != w {
				t.Errorf("Seen(%q) = %v; want %v", id, got, w)
			}
		}
		return nil
	})
}

// fill gives key one of everything.
func fill(t *testing.T, tx persistence.Tx, key string) {
	t.Helper()
	must(t, tx.PutSession(info(key)))
	seqs, err := tx.AppendMessages(key, msg(messages.RoleUser, "1"), msg(messages.RoleAssistant, "2"))
	must(t, err)
	must(t, tx.PutSnapshot(key, persistence.Snapshot{Seq: seqs[0], Summary: "sum", Created: base}))
	_, err = tx.AppendInbox(key, inbound("in1"))
	must(t, err)
	_, err = tx.AppendInbox(key, inbound("in2"))
	must(t, err)
	_, err = tx.AppendOutbox(key, outbound("out1"))
	must(t, err)
	_, err = tx.AppendOutbox(key, outbound("out2"))
	must(t, err)
}

func testDeleteSession(t *testing.T, s persistence.Store) {
	update(t, s, func(tx persistence.Tx) error {
		fill(t, tx, "gone")
		fill(t, tx, "kept")
		return nil
	})
	before := dump(t, s, []string{"kept"}, nil)
	update(t, s, func(tx persistence.Tx) error {
		must(t, tx.DeleteSession("gone"))
		return tx.DeleteSession("never-existed")
	})
	st := dump(t, s, []string{"gone"}, nil)
	if d := diff(sessionState{}, st.Keys["gone"]); d != "" {
		t.Errorf("deleted session still has state (-want +got):\n%s", d)
	}
	if d := diff([]string{"kept"}, st.Pending); d != "" {
		t.Errorf("PendingSessions after delete (-want +got):\n%s", d)
	}
	if len(st.Sessions) != 1 || st.Sessions[0].Key != "kept" {
		t.Errorf("Sessions after delete = %+v; want only kept", st.Sessions)
	}
	if d := diff(before.Keys["kept"], dump(t, s, []string{"kept"}, nil).Keys["kept"]); d != "" {
		t.Errorf("deleting one session changed another (-before +after):\n%s", d)
	}
	// The key can be used again and starts empty.
	update(t, s, func(tx persistence.Tx) error {
		seqs, err := tx.AppendMessages("gone", msg(messages.RoleUser, "again"))
		if err == nil && (len(seqs) != 1 || seqs[0] == 0) {
			t.Errorf("AppendMessages after delete = %v; want one non-zero seq", seqs)
		}
		return err
	})
	view(t, s, func(r persistence.Reader) error {
		got, err := r.Messages("gone", 0)
		must(t, err)
		if len(got) != 1 || got[0].Content != "again" {
			t.Errorf("Messages of re-created session = %+v; want only the new entry", got)
		}
		return nil
	})
}
