package configs

import (
	"strings"
	"testing"
)

func TestApplyEditsKeepsTheRest(t *testing.T) {
	src := []byte(`# my reef
providers:
  openai:
    apiKey: ${OPENAI_API_KEY} # from the environment
channels:
  telegram:
    botToken: ${TG}
    allowFrom: ["1"]
`)
	out, err := ApplyEdits(src, []Edit{
		{Path: []string{"channels", "telegram", "allowFrom"}, Value: []string{"1", "42"}},
		{Path: []string{"channels", "telegram", "streaming", "mode"}, Value: "off"},
		{Path: []string{"agents", "0", "id"}, Value: "main"},
		{Path: []string{"agents", "0", "model"}, Value: "openai/gpt-4.1"},
		{Path: []string{"tools", "exec", "approvals"}, Value: "always"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"# my reef", "apiKey: ${OPENAI_API_KEY} # from the environment", `allowFrom: ["1", "42"]`,
		"mode: off", "model: openai/gpt-4.1", "approvals: always", "- id: main"} {
		if !strings.Contains(got, want) {
			t.Errorf("the edited file lacks %q:\n%s", want, got)
		}
	}
	env := envOf(map[string]string{"OPENAI_API_KEY": "sk-x", "TG": "1:a", "HOME": "/h"})
	c, err := LoadBytes("reef.yaml", out, env)
	if err != nil {
		t.Fatalf("the edited file does not load: %v\n%s", err, got)
	}
	if c.Channels.Telegram.Streaming.Mode != "off" || len(c.Channels.Telegram.AllowFrom) != 2 {
		t.Errorf("loaded %+v", c.Channels.Telegram)
	}
	if v, ok := RawValue(out, "providers", "openai", "apiKey"); !ok || v != "${OPENAI_API_KEY}" {
		t.Errorf("RawValue = %q, %v", v, ok)
	}
	if !IsEnvRef("${OPENAI_API_KEY}") || IsEnvRef("sk-live") || IsEnvRef("${A}x") {
		t.Error("IsEnvRef")
	}
}
