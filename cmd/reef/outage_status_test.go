package main

import (
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
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
