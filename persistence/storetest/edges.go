package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

func testViewSeesCommitted(t *testing.T, s persistence.Store) {
	update(t, s, func(tx persistence.Tx) error { fill(t, tx, "k"); return nil })
	st := dump(t, s, []string{"k"}, nil)
	k := st.Keys["k"]
	if !k.Exists || len(k.Messages) != 2 || !k.HasSnap || len(k.Inbox) != 2 || len(k.Outbox) != 2 {
		t.Errorf("View after commit = %+v; want info, 2 entries, a snapshot, 2 inbox, 2 outbox", k)
	}
	err := s.View(func(persistence.Reader) error { return errAbort })
	if !errors.Is(err, errAbort) {
		t.Errorf("View = %v; want fn's error", err)
	}
}

func testReturnsCopies(t *testing.T, s persistence.Store) {
	call := msg(messages.RoleAssistant, "calling")
	call.ToolCalls = []messages.ToolCall{{ID: "c1", Name: "read", Arguments: "{}"}}
	update(t, s, func(tx persistence.Tx) error {
		fill(t, tx, "k")
		_, err := tx.AppendMessages("k", call)
		return err
	})
	before := dump(t, s, []string{"k"}, nil)
	view(t, s, func(r persistence.Reader) error {
		msgs, err := r.Messages("k", 0)
		must(t, err)
		msgs[0].Content = "changed"
		msgs[2].ToolCalls[0].Name = "changed"
		in, err := r.Inbox("k")
		must(t, err)
		in[0].Text = "changed"
		in[0].Attachment[0] = "changed"
		out, err := r.Outbox("k")
		must(t, err)
		out[0].Text = "changed"
		sessions, err := r.Sessions()
		must(t, err)
		sessions[0].AgentID = "changed"
		return nil
	})
	if d := diff(before, dump(t, s, []string{"k"}, nil)); d != "" {
		t.Errorf("mutating returned values changed the store (-before +after):\n%s", d)
	}
}

func testStoresCopies(t *testing.T, s persistence.Store) {
	call := msg(messages.RoleAssistant, "calling")
	call.ToolCalls = []messages.ToolCall{{ID: "c1", Name: "read", Arguments: "{}"}}
	in := inbound("hello")
	update(t, s, func(tx persistence.Tx) error {
		_, err := tx.AppendMessages("k", call)
		must(t, err)
		_, err = tx.AppendInbox("k", in)
		return err
	})
	before := dump(t, s, []string{"k"}, nil)
	call.ToolCalls[0].Name = "changed"
	in.Attachment[0] = "changed"
	if d := diff(before, dump(t, s, []string{"k"}, nil)); d != "" {
		t.Errorf("mutating values after storing them changed the store (-before +after):\n%s", d)
	}
}

func testOddKeys(t *testing.T, s persistence.Store) {
	keys := []string{
		"agent:main:telegram:direct:42", "agent:main:subagent:9f1c/2", "a/b/../c", "日本語:チャット",
		"emoji 🦀:1", "with space", "info", "msgs", "a", "a:", "a:b", "x\x00y", strings.Repeat("k", 500),
	}
	update(t, s, func(tx persistence.Tx) error {
		for _, k := range keys {
			in := info(k)
			must(t, tx.PutSession(in))
			_, err := tx.AppendMessages(k, msg(messages.RoleUser, "for "+k))
			must(t, err)
			_, err = tx.AppendInbox(k, inbound(k))
			must(t, err)
			ok, err := tx.MarkSeen("feishu:"+k, base)
			must(t, err)
			if !ok {
				t.Errorf("MarkSeen(feishu:%q) = false on first sighting", k)
			}
		}
		return nil
	})
	st := dump(t, s, keys, nil)
	if len(st.Sessions) != len(keys) || len(st.Pending) != len(keys) {
		t.Errorf("got %d sessions, %d pending; want %d each", len(st.Sessions), len(st.Pending), len(keys))
	}
	for i := 1; i < len(st.Sessions); i++ {
		if st.Sessions[i-1].Key >= st.Sessions[i].Key {
			t.Errorf("Sessions not in byte order: %q before %q", st.Sessions[i-1].Key, st.Sessions[i].Key)
		}
	}
	view(t, s, func(r persistence.Reader) error {
		for _, k := range keys {
			ks := st.Keys[k]
			if !ks.Exists || ks.Info.Key != k || len(ks.Messages) != 1 || ks.Messages[0].Content != "for "+k ||
				len(ks.Inbox) != 1 || ks.Inbox[0].Text != k {
				t.Errorf("key %q read back as %+v", k, ks)
			}
			if ok, err := r.Seen("feishu:" + k); !ok || err != nil {
				t.Errorf("Seen(feishu:%q) = %v, %v; want true", k, ok, err)
			}
		}
		return nil
	})
}

func testEmptyKeys(t *testing.T, s persistence.Store) {
	for name, fn := range map[string]func(tx persistence.Tx) error{
		"PutSession":     func(tx persistence.Tx) error { return tx.PutSession(persistence.SessionInfo{}) },
		"AppendMessages": func(tx persistence.Tx) error { _, err := tx.AppendMessages("", msg("user", "x")); return err },
		"AppendInbox":    func(tx persistence.Tx) error { _, err := tx.AppendInbox("", inbound("x")); return err },
		"AppendOutbox":   func(tx persistence.Tx) error { _, err := tx.AppendOutbox("", outbound("x")); return err },
		"MarkSeen":       func(tx persistence.Tx) error { _, err := tx.MarkSeen("", base); return err },
	} {
		if err := s.Update(fn); err == nil {
			t.Errorf("%s with an empty key: got nil error", name)
		}
	}
	st := dump(t, s, []string{""}, []string{""})
	if len(st.Sessions) != 0 || len(st.Pending) != 0 || st.Keys[""].Exists || st.Seen[""] {
		t.Errorf("state after refused writes = %+v; want empty", st)
	}
}

func testLargeValues(t *testing.T, s persistence.Store) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	m := msg(messages.RoleTool, big)
	m.ToolCallID = "c1"
	update(t, s, func(tx persistence.Tx) error {
		_, err := tx.AppendMessages("k", m, msg(messages.RoleAssistant, "small"))
		must(t, err)
		_, err = tx.AppendInbox("k", inbound(big))
		must(t, err)
		_, err = tx.AppendOutbox("k", outbound(big))
		must(t, err)
		return tx.PutSnapshot("k", persistence.Snapshot{Seq: 1, Summary: big})
	})
	var st sessionState // read directly: dump's JSON copy of 4 MiB is slow under -race
	view(t, s, func(r persistence.Reader) error {
		var err error
		if st.Messages, err = r.Messages("k", 0); err != nil {
			return err
		}
		if st.Inbox, err = r.Inbox("k"); err != nil {
			return err
		}
		if st.Outbox, err = r.Outbox("k"); err != nil {
			return err
		}
		st.Snapshot, st.HasSnap, err = r.LatestSnapshot("k")
		return err
	})
	if len(st.Messages) != 2 || st.Messages[0].Content != big || st.Messages[1].Content != "small" {
		t.Errorf("1 MiB message did not round-trip (%d entries)", len(st.Messages))
	}
	if len(st.Inbox) != 1 || st.Inbox[0].Text != big || len(st.Outbox) != 1 || st.Outbox[0].Text != big {
		t.Errorf("1 MiB inbox/outbox text did not round-trip")
	}
	if !st.HasSnap || st.Snapshot.Summary != big {
		t.Errorf("1 MiB snapshot did not round-trip")
	}
}
