package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

func testSessions(t *testing.T, s persistence.Store) {
	view(t, s, func(r persistence.Reader) error {
		if _, ok, err := r.Session("nope"); ok || err != nil {
			t.Errorf("Session(unknown) = %v, %v; want false, nil", ok, err)
		}
		return nil
	})
	keys := []string{"b", "a:2", "c", "a:10", "a"}
	update(t, s, func(tx persistence.Tx) error {
		for _, k := range keys {
			must(t, tx.PutSession(info(k)))
		}
		// A session with messages but no info is not listed.
		_, err := tx.AppendMessages("z-no-info", msg(messages.RoleUser, "hi"))
		return err
	})
	replaced := info("c")
	replaced.Model, replaced.Turns = "gpt-x", 9
	update(t, s, func(tx persistence.Tx) error { return tx.PutSession(replaced) })

	view(t, s, func(r persistence.Reader) error {
		got, err := r.Sessions()
		must(t, err)
		var gotKeys []string
		for _, in := range got {
			gotKeys = append(gotKeys, in.Key)
		}
		if d := diff([]string{"a", "a:10", "a:2", "b", "c"}, gotKeys); d != "" {
			t.Errorf("Sessions() keys (-want +got):\n%s", d)
		}
		in, ok, err := r.Session("c")
		must(t, err)
		if d := diff(replaced, in); !ok || d != "" {
			t.Errorf("Session(c) ok=%v (-want +got):\n%s", ok, d)
		}
		in, ok, err = r.Session("a:10")
		must(t, err)
		if d := diff(info("a:10"), in); !ok || d != "" {
			t.Errorf("Session(a:10) ok=%v (-want +got):\n%s", ok, d)
		}
		if _, ok, _ := r.Session("z-no-info"); ok {
			t.Errorf("Session(z-no-info) exists; want false (no PutSession)")
		}
		return nil
	})
}

func testMessages(t *testing.T, s persistence.Store) {
	call := msg(messages.RoleAssistant, "")
	call.ToolCalls = []messages.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}
	result := msg(messages.RoleTool, "file body")
	result.ToolCallID, result.ToolName, result.IsError = "c1", "read", true
	first := []messages.ChatMessage{msg(messages.RoleUser, "one"), call, result}
	var seqs1, seqs2, other []uint64
	update(t, s, func(tx persistence.Tx) error {
		var err error
		seqs1, err = tx.AppendMessages("k", first...)
		must(t, err)
		other, err = tx.AppendMessages("other", msg(messages.RoleUser, "x"))
		return err
	})
	update(t, s, func(tx persistence.Tx) error {
		var err error
		seqs2, err = tx.AppendMessages("k", msg(messages.RoleAssistant, "four"))
		return err
	})
	if len(seqs1) != 3 || len(seqs2) != 1 || seqs1[0] == 0 ||
		!(seqs1[0] < seqs1[1] && seqs1[1] < seqs1[2] && seqs1[2] < seqs2[0]) {
		t.Fatalf("seqs = %v then %v; want 4 increasing non-zero seqs", seqs1, seqs2)
	}
	if len(other) != 1 || other[0] == 0 {
		t.Errorf("other session seqs = %v; want one non-zero seq", other)
	}
	all := append(slices.Clone(seqs1), seqs2...)
	want := []persistence.Entry{
		{Seq: all[0], ChatMessage: first[0]}, {Seq: all[1], ChatMessage: first[1]},
		{Seq: all[2], ChatMessage: first[2]}, {Seq: all[3], ChatMessage: msg(messages.RoleAssistant, "four")},
	}
	view(t, s, func(r persistence.Reader) error {
		for _, tc := range []struct {
			after uint64
			want  []persistence.Entry
		}{
			{0, want}, {all[1], want[2:]}, {all[2], want[3:]}, {all[3], nil}, {all[3] + 100, nil},
		} {
			got, err := r.Messages("k", tc.after)
			must(t, err)
			if d := diff(tc.want, got); d != "" {
				t.Errorf("Messages(k, %d) (-want +got):\n%s", tc.after, d)
			}
		}
		got, err := r.Messages("unknown", 0)
		if err != nil || len(got) != 0 {
			t.Errorf("Messages(unknown) = %v, %v; want empty, nil", got, err)
		}
		return nil
	})
}

func testSnapshots(t *testing.T, s persistence.Store) {
	view(t, s, func(r persistence.Reader) error {
		if _, ok, err := r.LatestSnapshot("k"); ok || err != nil {
			t.Errorf("LatestSnapshot(unknown) = %v, %v; want false, nil", ok, err)
		}
		return nil
	})
	var seqs []uint64
	update(t, s, func(tx persistence.Tx) error {
		var err error
		seqs, err = tx.AppendMessages("k", msg("user", "1"), msg("assistant", "2"), msg("user", "3"),
			msg("assistant", "4"), msg("user", "5"))
		must(t, err)
		must(t, tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[1], Summary: "up to 2", Created: base}))
		return tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[3], Summary: "up to 4", Created: base.Add(time.Hour)})
	})
	// An older snapshot written later does not hide the newer one.
	update(t, s, func(tx persistence.Tx) error {
		return tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[2], Summary: "up to 3", Created: base})
	})
	view(t, s, func(r persistence.Reader) error {
		snap, ok, err := r.LatestSnapshot("k")
		must(t, err)
		want := persistence.Snapshot{Seq: seqs[3], Summary: "up to 4", Created: base.Add(time.Hour)}
		if d := diff(want, snap); !ok || d != "" {
			t.Fatalf("LatestSnapshot ok=%v (-want +got):\n%s", ok, d)
		}
		rest, err := r.Messages("k", snap.Seq) // loading = snapshot + the entries after it
		must(t, err)
		if len(rest) != 1 || rest[0].Seq != seqs[4] || rest[0].Content != "5" {
			t.Errorf("Messages after snapshot = %+v; want only entry 5", rest)
		}
		return nil
	})
	err := s.Update(func(tx persistence.Tx) error {
		return tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[4] + 1, Summary: "future"})
	})
	if err == nil {
		t.Errorf("PutSnapshot past the last entry: got nil error")
	}
}

func testInbox(t *testing.T, s persistence.Store) {
	var s1, s2, s3 uint64
	update(t, s, func(tx persistence.Tx) error {
		var err error
		s1, err = tx.AppendInbox("k", inbound("one"))
		must(t, err)
		s2, err = tx.AppendInbox("k", inbound("two"))
		return err
	})
	if s1 == 0 || s2 <= s1 {
		t.Fatalf("inbox seqs %d, %d; want increasing non-zero", s1, s2)
	}
	want := func(seq uint64, text string) persistence.InboxItem {
		in := inbound(text)
		in.SessionKey, in.InboxSeq = "k", seq
		return persistence.InboxItem{Seq: seq, Inbound: in}
	}
	checkInbox(t, s, []persistence.InboxItem{want(s1, "one"), want(s2, "two")})
	update(t, s, func(tx persistence.Tx) error {
		must(t, tx.DeleteInbox("k", s1))
		must(t, tx.DeleteInbox("k", s1))      // again: not an error
		must(t, tx.DeleteInbox("unknown", 1)) // unknown session: not an error
		var err error
		s3, err = tx.AppendInbox("k", inbound("three"))
		return err
	})
	if s3 <= s2 {
		t.Errorf("inbox seq after a delete = %d; want > %d (seqs are not reused)", s3, s2)
	}
	checkInbox(t, s, []persistence.InboxItem{want(s2, "two"), want(s3, "three")})
}

func checkInbox(t *testing.T, s persistence.Store, want []persistence.InboxItem) {
	t.Helper()
	view(t, s, func(r persistence.Reader) error {
		got, err := r.Inbox("k")
		must(t, err)
		if d := diff(want, got); d != "" {
			t.Errorf("Inbox (-want +got):\n%s", d)
		}
		return nil
	})
}

func testOutbox(t *testing.T, s persistence.Store) {
	var s1, s2, s3 uint64
	update(t, s, func(tx persistence.Tx) error {
		var err error
		s1, err = tx.AppendOutbox("k", outbound("one"))
		must(t, err)
		s2, err = tx.AppendOutbox("k", outbound("two"))
		return err
	})
	if s1 == 0 || s2 <= s1 {
		t.Fatalf("outbox seqs %d, %d; want increasing non-zero", s1, s2)
	}
	want := func(seq uint64, text string) persistence.OutboxItem {
		out := outbound(text)
		out.SessionKey, out.OutboxSeq = "k", seq
		return persistence.OutboxItem{Seq: seq, Outbound: out}
	}
	update(t, s, func(tx persistence.Tx) error {
		must(t, tx.DeleteOutbox("k", s2))
		must(t, tx.DeleteOutbox("k", s2+100)) // missing: not an error
		must(t, tx.DeleteOutbox("unknown", 1))
		var err error
		s3, err = tx.AppendOutbox("k", outbound("three"))
		return err
	})
	if s3 <= s2 {
		t.Errorf("outbox seq after a delete = %d; want > %d (seqs are not reused)", s3, s2)
	}
	view(t, s, func(r persistence.Reader) error {
		got, err := r.Outbox("k")
		must(t, err)
		if d := diff([]persistence.OutboxItem{want(s1, "one"), want(s3, "three")}, got); d != "" {
			t.Errorf("Outbox (-want +got):\n%s", d)
		}
		got, err = r.Outbox("unknown")
		if err != nil || len(got) != 0 {
			t.Errorf("Outbox(unknown) = %v, %v; want empty, nil", got, err)
		}
		return nil
	})
}
