package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyCommandsWithSecretsUnset: commands that only read work in a shell where the
// configuration's ${SECRET} variables are not set; the gateway, which uses them, still
// refuses to start and names the variable.
func TestReadOnlyCommandsWithSecretsUnset(t *testing.T) {
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "providers:\n  openai:\n    type: openai\n    apiKey: ${REEF_TEST_OPENAI_KEY}\n" +
		"agents:\n  - id: main\n    model: openai/gpt-4o\n" +
		"channels:\n  telegram:\n    botToken: ${REEF_TEST_TG_TOKEN}\n"
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env{"REEF_HOME": home, "HOME": home, "REEF_ALLOW_ROOT": "1"} // CI runs as root: the audit would flag that, not the secrets
	for _, args := range [][]string{
		{"status"}, {"sessions", "list"}, {"cron", "list"}, {"pairing", "list"}, {"security", "audit"},
	} {
		res := reef(t, e, "", args...)
		if res.code != 0 || strings.Contains(res.stderr, "is not set") {
			t.Errorf("reef %s with the secrets unset = %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
		}
	}
	// events needs a running gateway: it says so, not that a secret is missing.
	if res := reef(t, e, "", "events"); !strings.Contains(res.stderr, "reef is not running") {
		t.Errorf("reef events with the secrets unset: %d %q, want \"reef is not running\"", res.code, res.stderr)
	}
	// Where the secrets are used, their absence is an error that names them.
	if res := reef(t, e, "", "gateway"); res.code == 0 || !strings.Contains(res.stderr, "${REEF_TEST_OPENAI_KEY} is not set") {
		t.Errorf("reef gateway with the secrets unset = %d, stderr %q; want a refusal naming the variable", res.code, res.stderr)
	}
}
