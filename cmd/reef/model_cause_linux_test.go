package main

import (
	"strings"
	"testing"
	"time"
)

// TestInteractiveChatNamesWhyTheModelIsUnreachable: in the interactive terminal, a model
// whose server refuses connections is explained where the user is: the cause in plain words,
// with the address, and what to do (reef doctor) — not a bare "unreachable right now".
func TestInteractiveChatNamesWhyTheModelIsUnreachable(t *testing.T) {
	home := newHome(t)
	addr := freeAddr(t) // nothing listens there: connection refused
	e := env{"REEF_HOME": home, "HOME": home, "OPENAI_API_KEY": canary, "REEF_MODEL": "openai/test-model",
		"OPENAI_BASE_URL": "http://" + addr + "/v1"}
	c := startInteractive(t, e)
	c.waitFor("tty", c.tty, "› ")
	c.master.WriteString("hello\n")
	deadline := time.Now().Add(time.Minute)
	want := "The model is unreachable right now: " + addr + " refused the connection"
	for !strings.Contains(c.tty.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal lacks %q after a minute:\ntty: %q\nstderr: %q", want, c.tty, c.stderr)
		}
		time.Sleep(50 * time.Millisecond) // bounded polling of the child's output
	}
	c.waitFor("tty", c.tty, "run `reef doctor`")
	if strings.Contains(c.tty.String(), "dial tcp") {
		t.Errorf("the terminal shows a raw error chain: %q", c.tty)
	}
}
