package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// TestStatusShowsDeadLetters: reef status tells the operator about messages set aside
// because they crashed their session.
func TestStatusShowsDeadLetters(t *testing.T) {
	home := newHome(t)
	if err := os.MkdirAll(filepath.Join(home, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(messages.Inbound{Channel: "telegram", ChatID: "42", Text: "the message that\ncrashes reef"})
	err = st.Update(func(tx persistence.Tx) error {
		return tx.Put("deadletter", "agent:main:telegram:direct:42#00000000000000000007", in)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	res := reef(t, env{"REEF_HOME": home, "HOME": filepath.Dir(home)}, "", "status")
	want := `dead letters: 1 (messages that made reef fail twice and were set aside; latest in agent:main:telegram:direct:42, inbox seq 7: "the message that crashes reef")`
	if res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Errorf("status = %d\n%s%s\nwant a line %s", res.code, res.stdout, res.stderr, want)
	}
}

// TestStatusShowsDeadReplies: reef status tells the operator about replies set aside because
// the platform refused them for too long (actors/connector_retry.go).
func TestStatusShowsDeadReplies(t *testing.T) {
	home := newHome(t)
	if err := os.MkdirAll(filepath.Join(home, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(messages.Outbound{Channel: "telegram", ChatID: "42", Text: "an answer nobody got",
		SessionKey: "agent:main:telegram:direct:42", OutboxSeq: 3})
	err = st.Update(func(tx persistence.Tx) error {
		return tx.Put("deadreply", "agent:main:telegram:direct:42#00000000000000000003", out)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	res := reef(t, env{"REEF_HOME": home, "HOME": filepath.Dir(home)}, "", "status")
	want := `dead replies: 1 (replies the platform refused for too long, set aside; latest in agent:main:telegram:direct:42: "an answer nobody got")`
	if res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Errorf("status = %d\n%s%s\nwant a line %s", res.code, res.stdout, res.stderr, want)
	}
}
