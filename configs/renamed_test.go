package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenamedKeys: with a table of renamed keys, the old names load as the new ones, each
// with a note naming the line and the new name; a key set under both names keeps the new
// value; without the table, the old names are unknown keys.
func TestRenamedKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.yaml")
	data := `providers:
  openai: {apiKey: x, endpoint: "http://127.0.0.1:1/v1"}
  local: {type: openai, apiKey: y, endpoint: "http://old", baseUrl: "http://new"}
agents:
  - id: main
    model: openai/gpt-4.1
    prompt: Be brief.
  - id: work
    model: openai/gpt-4.1-mini
    systemPrompt: Be thorough.
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(string) string { return "" }
	old := renamedKeys
	t.Cleanup(func() { renamedKeys = old })

	renamedKeys = nil
	if _, err := Load(path, env); err == nil || !strings.Contains(err.Error(), "prompt") || !strings.Contains(err.Error(), "endpoint") {
		t.Fatalf("Load without the renames = %v; want the old names as unknown keys", err)
	}

	renamedKeys = []renamedKey{
		{old: "agents[].prompt", new: "systemPrompt", since: "v9.0.0"},
		{old: "providers.*.endpoint", new: "baseUrl", since: "v9.0.0"},
	}
	c, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Agents[0].SystemPrompt; got != "Be brief." {
		t.Errorf("agents[0].systemPrompt = %q; want the old key's value", got)
	}
	if got := c.Agents[1].SystemPrompt; got != "Be thorough." {
		t.Errorf("agents[1].systemPrompt = %q", got)
	}
	if got := c.Providers["openai"].BaseURL; got != "http://127.0.0.1:1/v1" {
		t.Errorf("providers.openai.baseUrl = %q; want the old key's value", got)
	}
	if got := c.Providers["local"].BaseURL; got != "http://new" {
		t.Errorf("providers.local.baseUrl = %q; want the new key's value when both are set", got)
	}
	notes := strings.Join(c.Notes(), "\n")
	for _, want := range []string{
		"agents[0].prompt (line 7) was renamed agents[0].systemPrompt in reef v9.0.0: the old name works until the next release",
		"providers.openai.endpoint (line 2) was renamed providers.openai.baseUrl",
		"providers.local.endpoint (line 3) was renamed providers.local.baseUrl in reef v9.0.0, which is also set: providers.local.endpoint is ignored",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes do not say %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "agents[1]") {
		t.Errorf("a note for agents[1], which uses the new name:\n%s", notes)
	}
}
