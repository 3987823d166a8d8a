package openclaw

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// TestEveryKeyAccounted imports an openclaw.json that uses every key docs/openclaw.md names:
// each is mapped into reef.yaml or reported with its reason; agents.defaults.systemPrompt
// reaches the agents without their own, memory is not "not a setting reef has", the web tools
// turned off are denied to every agent, and allowFrom ["*"] is "anyone", not "1 allowed
// sender" (#33.14).
func TestEveryKeyAccounted(t *testing.T) {
	in, err := Read("testdata/openclaw-full")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(in, Options{ReefHome: t.TempDir(), KnownTools: append(reefTools, "web_search"), Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Agents []struct {
			ID           string
			SystemPrompt string `yaml:"systemPrompt"`
			Tools        struct{ Allow, Deny []string }
		}
		Memory map[string]any
	}
	if err := yaml.Unmarshal(p.YAML, &cfg); err != nil {
		t.Fatalf("%v\n%s", err, p.YAML)
	}
	if len(cfg.Agents) != 2 {
		t.Fatalf("agents: %+v", cfg.Agents)
	}
	main, ops := cfg.Agents[0], cfg.Agents[1]
	if main.SystemPrompt != "Answer briefly, in the user's language." || ops.SystemPrompt != "You run operations." {
		t.Errorf("systemPrompt: main %q, ops %q; want the defaults' for main, its own for ops", main.SystemPrompt, ops.SystemPrompt)
	}
	for _, a := range cfg.Agents {
		for _, tool := range []string{"web_fetch", "web_search"} {
			if !contains(a.Tools.Deny, tool) {
				t.Errorf("agent %s: tools.deny %v lacks %s (turned off in tools.web)", a.ID, a.Tools.Deny, tool)
			}
		}
	}
	if !contains(main.Tools.Deny, "cron") {
		t.Errorf("main: tools.deny %v lacks agents.defaults.tools' cron", main.Tools.Deny)
	}
	if cfg.Memory["provider"] != "openai" || cfg.Memory["model"] != "text-embedding-3-small" {
		t.Errorf("memory = %v, want agents.defaults.memorySearch's provider and model", cfg.Memory)
	}
	report := reportText(p.Report)
	for _, s := range p.Report.Skipped {
		if strings.HasPrefix(s.What, "memory") && strings.Contains(s.Why, "not a setting reef has") {
			t.Errorf("%s: %s", s.What, s.Why)
		}
	}
	if strings.Contains(report, "1 allowed sender") && strings.Contains(report, "channels.telegram: dmPolicy open, 1 allowed") {
		t.Errorf("allowFrom [\"*\"] counted as a sender:\n%s", report)
	}
	for _, want := range []string{
		"channels.telegram: dmPolicy open, anyone may write",
		"channels.feishu: dmPolicy pairing, anyone may write (allowFrom \"*\"), 1 allowed sender",
		"memory.backend", "memory.citations", "session.reset", "messages.responsePrefix", "cron.enabled", "cron.maxConcurrentRuns",
		"tools.web.search.maxResults", "tools.web.fetch.maxChars", "agents.defaults.thinkingDefault", "agents.defaults.blockStreamingDefault",
		"agents.defaults.memorySearch.chunking", "web_fetch denied to every agent", "web_search denied to every agent",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report does not mention %q:\n%s", want, report)
		}
	}
}

// reportText is the report's lines, imported and skipped.
func reportText(r Report) string {
	var b strings.Builder
	for _, l := range r.Imported {
		b.WriteString(l + "\n")
	}
	for _, s := range r.Skipped {
		b.WriteString(s.What + ": " + s.Why + "\n")
	}
	return b.String()
}
