package configs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenClawAliases: OpenClaw's shapes of agent keys load as reef's, each with a note, and
// reef's own shapes give none.
func TestOpenClawAliases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.yaml")
	data := `providers:
  openai: {apiKey: x}
agents:
  - id: main
    identity: {name: Clawd, emoji: "🦞"}
    model: {primary: openai/gpt-4.1, fallbacks: [openai/gpt-4.1-mini]}
    skills: [weather, summarize]
    systemPrompt: Be brief.
  - id: work
    name: Work
    model: openai/gpt-4.1-mini
    skills: {allow: [weather]}
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a := c.Agents[0]
	if a.Name != "Clawd" || a.Model != "openai/gpt-4.1" || !slices.Equal(a.Fallbacks, []string{"openai/gpt-4.1-mini"}) ||
		!slices.Equal(a.Skills.Allow, []string{"weather", "summarize"}) || a.SystemPrompt != "Be brief." {
		t.Errorf("agents[0] = %+v", a)
	}
	if b := c.Agents[1]; b.Name != "Work" || b.Model != "openai/gpt-4.1-mini" || !slices.Equal(b.Skills.Allow, []string{"weather"}) {
		t.Errorf("agents[1] = %+v", b)
	}
	notes := strings.Join(c.Notes(), "\n")
	for _, want := range []string{"agents[0].skills is a list", "agents[0].model is {primary, fallbacks}", "agents[0].identity"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "agents[1]") {
		t.Errorf("reef's own shapes got a note:\n%s", notes)
	}
}
