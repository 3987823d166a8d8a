package access

import (
	"errors"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
)

func TestExecApprovalRecords(t *testing.T) {
	store := memory.New()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	update := func(fn func(tx persistence.Tx) error) error { return store.Update(fn) }
	var ids []string
	for _, cmd := range []string{"git status --short", "ls; rm -rf x"} {
		if err := update(func(tx persistence.Tx) error {
			id := NewExecRequestID(func(id string) bool { return len(ids) > 0 && ids[0] == id })
			prefix, _ := Prefix(cmd)
			ids = append(ids, id)
			return PutExecRequest(tx, ExecRequest{ID: id, SessionKey: "s", CallID: "c-" + id, Command: cmd, Prefix: prefix,
				Channel: "telegram", SenderID: "42", Created: t0, Deadline: t0.Add(time.Minute)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if ids[0] == ids[1] || len(ids[0]) != 6 {
		t.Fatalf("ids %v: want two different 6-character ids", ids)
	}
	// Always on a command with an operator approves it once: nothing is stored.
	for i, id := range ids {
		if err := update(func(tx persistence.Tx) error {
			d, err := DecideExec(tx, " "+id+" ", DecisionAlways, "telegram:owner", t0.Add(time.Duration(i+1)*time.Second))
			if err == nil && i == 1 && d.Decision != DecisionApproved {
				t.Errorf("decision on a command with an operator = %s, want %s", d.Decision, DecisionApproved)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	err := update(func(tx persistence.Tx) error {
		_, err := DecideExec(tx, ids[0], DecisionDenied, "x", t0)
		return err
	})
	if !errors.Is(err, ErrNoExecRequest) {
		t.Errorf("deciding twice: err %v, want ErrNoExecRequest", err)
	}
	_ = store.View(func(r persistence.Reader) error {
		pending, _ := ExecRequests(r)
		audit, _ := ExecDecisions(r, 0)
		prefixes, _ := ExecPrefixes(r)
		if len(pending) != 0 {
			t.Errorf("pending after the decisions: %v", pending)
		}
		if len(audit) != 2 || audit[0].ID != ids[1] || audit[1].Decision != DecisionAlways {
			t.Errorf("audit = %+v, want the two decisions, newest first", audit)
		}
		if len(prefixes) != 1 || prefixes[0].Prefix != "git status" || prefixes[0].FromID != ids[0] {
			t.Errorf("prefixes = %+v, want git status", prefixes)
		}
		if p, ok := MatchPrefix("git status -s", prefixes); !ok || p != "git status" {
			t.Errorf("MatchPrefix = %q, %v", p, ok)
		}
		return nil
	})
	if err := update(func(tx persistence.Tx) error { return RevokeExecPrefix(tx, "git   status") }); err != nil {
		t.Fatal(err)
	}
	if err := update(func(tx persistence.Tx) error { return RevokeExecPrefix(tx, "git status") }); !errors.Is(err, ErrNoPrefix) {
		t.Errorf("revoking twice: %v, want ErrNoPrefix", err)
	}
	if err := update(func(tx persistence.Tx) error { return PruneExecAudit(tx, 1) }); err != nil {
		t.Fatal(err)
	}
	_ = store.View(func(r persistence.Reader) error {
		audit, _ := ExecDecisions(r, 0)
		if len(audit) != 1 || audit[0].ID != ids[1] {
			t.Errorf("after pruning to 1: %+v, want the newest", audit)
		}
		return nil
	})
}

func TestMayApprove(t *testing.T) {
	rules := &Rules{DMPolicy: "pairing", AllowFrom: []string{"*", "owner"}}
	tests := []struct {
		name  string
		rules *Rules
		in    messages.Inbound
		want  bool
	}{
		{"terminal", nil, messages.Inbound{Channel: "terminal", ChatType: messages.ChatDirect}, true},
		{"owner in a DM", rules, messages.Inbound{Channel: "telegram", SenderID: "owner", ChatType: messages.ChatDirect}, true},
		{"owner in a group", rules, messages.Inbound{Channel: "telegram", SenderID: "owner", ChatType: messages.ChatGroup}, true},
		{"a guest", rules, messages.Inbound{Channel: "telegram", SenderID: "42", ChatType: messages.ChatDirect}, false},
		{"no rules", nil, messages.Inbound{Channel: "telegram", SenderID: "owner", ChatType: messages.ChatDirect}, false},
		{"a system event", rules, messages.Inbound{Channel: "telegram", SenderID: "owner", System: true}, false},
	}
	for _, tt := range tests {
		if got := tt.rules.MayApprove(&tt.in); got != tt.want {
			t.Errorf("%s: MayApprove = %v, want %v", tt.name, got, tt.want)
		}
	}
}
