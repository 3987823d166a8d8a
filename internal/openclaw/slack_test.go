package openclaw

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reefgw/reef/configs"
)

// TestSlackImport: OpenClaw's channels.slack (Socket Mode with an HTTP-mode account, DM
// policy, allowFrom with prefixes, channels by id) maps onto reef's channels.slack, the
// tokens become ${SLACK_…} references, never copied, and reef loads the result.
func TestSlackImport(t *testing.T) {
	dir := t.TempDir()
	conf := `{
  agents: {defaults: {model: {primary: "openai/gpt-4.1"}}},
  channels: {
    slack: {
      enabled: true, mode: "socket", appToken: "xapp-canary-1", botToken: "xoxb-canary-2",
      dmPolicy: "allowlist", allowFrom: ["slack:U123", "<@U456>"],
      channels: {"C111": {allow: true, requireMention: false}, "C222": {allow: false}},
      replyToMode: "all",
      accounts: {ops: {mode: "http", botToken: "xoxb-canary-3", signingSecret: "canary-secret-4", webhookPath: "/slack/ops"}},
    },
  },
}`
	if err := os.WriteFile(filepath.Join(dir, "openclaw.json"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(in, Options{ReefHome: t.TempDir(), KnownTools: reefTools, Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"xapp-canary-1", "xoxb-canary-2", "xoxb-canary-3", "canary-secret-4"} {
		if strings.Contains(string(p.YAML), c) {
			t.Errorf("the plan copies the secret %q:\n%s", c, p.YAML)
		}
	}
	var cfg struct {
		Channels struct{ Slack outSlack }
	}
	if err := yaml.Unmarshal(p.YAML, &cfg); err != nil {
		t.Fatalf("%v\n%s", err, p.YAML)
	}
	s := cfg.Channels.Slack
	if s.BotToken != "${SLACK_BOT_TOKEN}" || s.AppToken != "${SLACK_APP_TOKEN}" || s.DMPolicy != "allowlist" ||
		!slices.Equal(s.AllowFrom, []string{"U123", "U456"}) || !slices.Equal(s.Groups, []string{"C111"}) {
		t.Errorf("channels.slack = %+v\n%s", s, p.YAML)
	}
	ops := s.Accounts["ops"]
	if ops == nil || ops.Mode != "events" || ops.BotToken != "${SLACK_OPS_BOT_TOKEN}" ||
		ops.SigningSecret != "${SLACK_OPS_SIGNING_SECRET}" || ops.EventsPath != "/slack/ops" {
		t.Errorf("the ops account = %+v", ops)
	}
	// reef takes the result, given the variables it names.
	path := filepath.Join(t.TempDir(), "reef.yaml")
	if err := os.WriteFile(path, p.YAML, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-x", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1",
		"SLACK_OPS_BOT_TOKEN": "xoxb-2", "SLACK_OPS_SIGNING_SECRET": "s"}
	if _, err := configs.Load(path, func(k string) string { return env[k] }); err != nil {
		t.Errorf("reef refuses the imported config: %v\n%s", err, p.YAML)
	}
	if !slices.ContainsFunc(p.Report.Skipped, func(s Skip) bool { return strings.Contains(s.What, "replyToMode") }) {
		t.Errorf("replyToMode not reported as skipped: %+v", p.Report.Skipped)
	}
}
