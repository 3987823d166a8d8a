package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	ledger "github.com/reefgw/reef/usage"
)

// Without a running gateway `reef usage` reads the ledger the runs wrote, priced by
// models.<ref>.cost.
func TestUsageCLIOffline(t *testing.T) {
	home := newHome(t)
	srv := newFake(t)
	srv.Script().Respond = func(fake.Request) fake.Reply {
		return fake.Reply{Text: "hi", Usage: messages.Usage{InputTokens: 2000, OutputTokens: 100}}
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "models:\n  openai/test-model:\n    cost: {input: 2, output: 8}\n"
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e := withFake(home, srv)
	if chat := reef(t, e, "hello\nagain\n", "chat"); chat.code != 0 {
		t.Fatalf("reef chat = %d\n%s", chat.code, chat.stderr)
	}
	u := reef(t, e, "", "usage")
	// two runs: 4000 in × 2/M + 200 out × 8/M = 0.0096
	if u.code != 0 || !strings.Contains(u.stdout, "4.0k in, 200 out") || !strings.Contains(u.stdout, "0.0096") ||
		!strings.Contains(u.stdout, "openai/test-model") || !strings.Contains(u.stdout, "terminal") {
		t.Errorf("reef usage = %d\n%s%s", u.code, u.stdout, u.stderr)
	}
	var rep ledger.Report
	j := reef(t, e, "", "usage", "-days", "1", "-json")
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || len(rep.Days) != 1 || rep.Total.OutputTokens != 200 {
		t.Errorf("reef usage -json: %v\n%s", err, j.stdout)
	}
	if bad := reef(t, e, "", "usage", "-days", "0"); bad.code != 2 {
		t.Errorf("reef usage -days 0 = %d", bad.code)
	}
}
