package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
)

// TestPrintOutages: reef status names the provider that is down, since when, the next probe,
// and the messages waiting for it.
func TestPrintOutages(t *testing.T) {
	since := time.Now().Add(-3 * time.Minute)
	st := Status{
		ModelOutages: []providers.Outage{{Provider: "openai", Since: since, NextProbe: time.Now().Add(20 * time.Second),
			LastError: "dial tcp 127.0.0.1:8089: connect: connection refused"}},
		WaitingForModel: []actors.WaitingForModel{{SessionKey: "a", Since: since, Messages: 2}, {SessionKey: "b", Since: since, Messages: 1}},
	}
	var b strings.Builder
	printOutages(&b, st)
	got := b.String()
	for _, want := range []string{"model openai UNREACHABLE since", "(3m0s ago)", "next probe in 2", "connection refused",
		"waiting for the model: 3 message(s) in 2 conversation(s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	printOutages(&b, Status{})
	if b.Len() != 0 {
		t.Errorf("no outage printed %q, want nothing", b.String())
	}
}

// TestSettleLetsMessagesWaitForTheModel: a message waiting for the model does not hold
// reef chat's terminal (settle would otherwise wait out the run limit during an outage).
func TestSettleLetsMessagesWaitForTheModel(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &running{store: st}
	const key = "agent:main:terminal:direct:owner"
	if err := st.Update(func(tx persistence.Tx) error {
		_, err := tx.AppendInbox(key, messages.Inbound{Text: "hello"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if r.settle(key, 50*time.Millisecond, time.Hour, nil) {
		t.Fatal("settle = true while a message waits for its answer")
	}
	if err := st.Update(func(tx persistence.Tx) error {
		return tx.Put("runs/waiting", key, []byte(`{"since":"2026-03-01T09:00:00Z","notified":true}`))
	}); err != nil {
		t.Fatal(err)
	}
	if !r.settle(key, 200*time.Millisecond, time.Hour, nil) {
		t.Error("settle = false while the message waits for the model")
	}
}
