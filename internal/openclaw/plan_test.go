package openclaw

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// canaries are the secrets written in the fixture's openclaw.json: none may be copied.
var canaries = []string{"AAcanaryTelegramTokenValue", "sk-local-canary-5678", "brave-canary-value-1234", "gateway-canary-token-999"}

var reefTools = []string{"read", "write", "edit", "ls", "apply_patch", "exec", "web_fetch", "memory_search",
	"memory_get", "cron", "message", "update_plan", "sessions_spawn"}

func buildFixture(t *testing.T, home string) *Plan {
	t.Helper()
	in, err := Read("testdata/openclaw")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(in, Options{ReefHome: home, KnownTools: reefTools, Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuildFixture: the sample OpenClaw directory (two agents, Telegram and Feishu, cron
// jobs, skills, JSON5) maps to reef's keys, and what cannot be mapped is reported.
func TestBuildFixture(t *testing.T) {
	home := t.TempDir()
	p := buildFixture(t, home)
	var cfg struct {
		Providers map[string]map[string]string
		Agents    []struct {
			ID, Name, Model string
			SystemPrompt    string `yaml:"systemPrompt"`
			Fallbacks       []string
			Skills, Tools   struct{ Allow, Deny []string }
			Heartbeat       struct {
				Every       string
				ActiveHours map[string]string `yaml:"activeHours"`
			}
		}
		Session  map[string]any
		Channels struct {
			Telegram map[string]any
			Feishu   struct {
				DMPolicy  string   `yaml:"dmPolicy"`
				AllowFrom []string `yaml:"allowFrom"`
				Groups    []string
				Accounts  map[string]map[string]any
			}
		}
		Bindings []map[string]any
	}
	if err := yaml.Unmarshal(p.YAML, &cfg); err != nil {
		t.Fatalf("%v\n%s", err, p.YAML)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !equal(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("agents", len(cfg.Agents), 2)
	main, work := cfg.Agents[0], cfg.Agents[1]
	check("main id", main.ID, "main")
	check("main name (identity.name)", main.Name, "Clawd")
	check("main model (defaults)", main.Model, "anthropic/claude-sonnet-4-5")
	check("main fallbacks", main.Fallbacks, []string{"openai/gpt-4.1-mini"})
	check("main systemPrompt", main.SystemPrompt, "Always answer in the user's language.")
	check("main skills", main.Skills.Allow, []string{"weather", "summarize"})
	check("main heartbeat (only agents with one run them)", main.Heartbeat.Every, "off")
	check("work id", work.ID, "work")
	check("work model", work.Model, "openrouter/qwen/qwen-2.5-72b-instruct")
	check("work tools (bash is exec; browser left out)", work.Tools.Allow, []string{"read", "exec", "group:web"})
	check("work heartbeat", work.Heartbeat.Every, "2h")
	check("work active hours tz", work.Heartbeat.ActiveHours["tz"], "Asia/Shanghai")
	check("openrouter", cfg.Providers["openrouter"], map[string]string{"type": "openai", "baseUrl": "https://openrouter.ai/api/v1", "apiKey": "${OPENROUTER_API_KEY}"})
	check("anthropic key", cfg.Providers["anthropic"]["apiKey"], "${ANTHROPIC_API_KEY}")
	check("telegram token", cfg.Channels.Telegram["botToken"], "${TELEGRAM_BOT_TOKEN}")
	check("telegram allowFrom (tg: removed, @name left out)", cfg.Channels.Telegram["allowFrom"], []any{"111222333"})
	check("telegram groups", cfg.Channels.Telegram["groups"], []any{"*"})
	check("feishu dmPolicy", cfg.Channels.Feishu.DMPolicy, "allowlist")
	check("feishu groups (groupAllowFrom)", cfg.Channels.Feishu.Groups, []string{"oc_team1"})
	check("feishu account", cfg.Channels.Feishu.Accounts["main"], map[string]any{"appId": "cli_a1b2c3", "appSecret": "${FEISHU_MAIN_SECRET}"})
	check("bindings", len(cfg.Bindings), 1)
	check("session.queue", cfg.Session["queue"], map[string]any{"mode": "collect", "debounceMs": 1000})

	skipped := map[string]string{}
	for _, s := range p.Report.Skipped {
		skipped[s.What] = s.Why
	}
	for what, why := range map[string]string{
		"channels.whatsapp":                    "no whatsapp channel",
		"bindings[1]":                          "whatsapp",
		"agents work: tool browser":            "no such tool",
		"cron job Post to webhook":             "webhook",
		"plugins":                              "plugins",
		"gateway":                              "gateway",
		"env.BRAVE_API_KEY":                    "not copied",
		"channels.telegram.allowFrom @someone": "numeric id",
		"channels.telegram: streaming":         "no reef equivalent",
		"models.providers.local-llm":           "no agent",
		"agents/<id>/sessions":                 "not imported",
		"workspace of main: projects":          "copy other files",
	} {
		if !strings.Contains(skipped[what], why) {
			t.Errorf("report on %q = %q, want it to say %q", what, skipped[what], why)
		}
	}
	var env []string
	for _, e := range p.Report.Env {
		env = append(env, e.Name)
	}
	slices.Sort(env)
	check("environment variables", env, []string{"ANTHROPIC_API_KEY", "FEISHU_MAIN_SECRET", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "TELEGRAM_BOT_TOKEN"})

	var names []string
	for _, j := range p.Jobs {
		names = append(names, j.AgentID+":"+j.Input.Name)
	}
	check("cron jobs", names, []string{"main:Morning brief", "work:Stand-up reminder"})
	if d := p.Jobs[0].Input.Delivery; d == nil || d.Mode != "channel" || d.Channel != "telegram" || d.To != "111222333" {
		t.Errorf("morning brief delivery = %+v", d)
	}
	var targets []string
	for _, c := range p.Copies {
		rel, _ := filepath.Rel(home, c.To)
		targets = append(targets, rel)
	}
	check("copies", targets, []string{"workspace/AGENTS.md", "workspace/HEARTBEAT.md", "workspace/MEMORY.md",
		"workspace/SOUL.md", "workspace/USER.md", "workspace/memory/2026-02-01.md", "workspace/skills/weather/SKILL.md",
		"workspace-work/SOUL.md", "workspace-work/memory/2026-01-15.md", "skills/summarize/SKILL.md"})
	all := string(p.YAML) + fmtReport(p.Report)
	for _, c := range canaries {
		if strings.Contains(all, c) {
			t.Errorf("the secret %q is in the imported config or the report", c)
		}
	}
}

func fmtReport(r Report) string {
	var b strings.Builder
	for _, l := range r.Imported {
		b.WriteString(l + "\n")
	}
	for _, s := range r.Skipped {
		b.WriteString(s.What + ": " + s.Why + "\n")
	}
	for _, e := range r.Env {
		b.WriteString(e.Name + ": " + e.For + "\n")
	}
	return b.String()
}

func equal(a, b any) bool {
	ya, _ := yaml.Marshal(a)
	yb, _ := yaml.Marshal(b)
	return string(ya) == string(yb)
}

// TestWriteNeverOverwrites: Write writes the plan; a second plan meeting files with other
// content writes nothing without overwrite, and replaces them with it. The OpenClaw
// directory is never changed.
func TestWriteNeverOverwrites(t *testing.T) {
	before := treeHash(t, "testdata/openclaw")
	home := t.TempDir()
	cfgPath := filepath.Join(home, "reef.yaml")
	p := buildFixture(t, home)
	if err := p.Write(cfgPath, false); err != nil {
		t.Fatal(err)
	}
	soul := filepath.Join(home, "workspace", "SOUL.md")
	if b, _ := os.ReadFile(soul); !strings.Contains(string(b), "friendly lobster") {
		t.Fatalf("SOUL.md = %q", b)
	}
	if st, _ := os.Stat(cfgPath); st.Mode().Perm() != 0o600 {
		t.Errorf("reef.yaml mode %v, want 0600", st.Mode().Perm())
	}
	if err := p.Write(cfgPath, false); err != nil {
		t.Errorf("writing the same plan again: %v (nothing differs)", err)
	}
	os.WriteFile(soul, []byte("my own soul"), 0o644)
	os.WriteFile(cfgPath, []byte("agents: []\n"), 0o600)
	if c := p.Conflicts(cfgPath); len(c) != 2 {
		t.Errorf("conflicts = %q, want reef.yaml and SOUL.md", c)
	}
	if err := p.Write(cfgPath, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("write over changed files: %v", err)
	}
	if b, _ := os.ReadFile(soul); string(b) != "my own soul" {
		t.Error("a refused write changed SOUL.md")
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != "agents: []\n" {
		t.Error("a refused write changed reef.yaml")
	}
	if err := p.Write(cfgPath, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(soul); !strings.Contains(string(b), "friendly lobster") {
		t.Error("--force did not replace SOUL.md")
	}
	if after := treeHash(t, "testdata/openclaw"); after != before {
		t.Error("the OpenClaw directory changed")
	}
}

func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, _ := d.Info()
		h.Write([]byte(p + st.Mode().String()))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestAgentEntriesAndShapes: newer OpenClaw's agents.entries map (file order kept, the
// default first), a bare model name (Anthropic's), a provider reef cannot reach, Discord
// guild channels by id, and a missing state directory.
func TestAgentEntriesAndShapes(t *testing.T) {
	dir := t.TempDir()
	conf := `{
  agents: {
    entries: {
      zeta: { model: "claude-opus-4-6", skills: [] },
      alpha: { default: true, model: { primary: "openai-codex/gpt-5", fallbacks: ["google/gemini-2.5-flash"] } },
    },
  },
  channels: {
    discord: {
      token: { source: "exec", provider: "vault", id: "discord/token" },
      dmPolicy: "open",
      guilds: { "111": { requireMention: false, channels: { "222": { allow: true }, general: { allow: true } } }, "333": {} },
    },
  },
}`
	os.WriteFile(filepath.Join(dir, "openclaw.json"), []byte(conf), 0o600)
	in, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(in, Options{ReefHome: t.TempDir(), KnownTools: reefTools})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Agents []struct {
			ID, Model string
			Fallbacks []string
		}
		Channels struct {
			Discord map[string]any
		}
	}
	if err := yaml.Unmarshal(p.YAML, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Agents) != 2 || cfg.Agents[0].ID != "alpha" || cfg.Agents[1].ID != "zeta" {
		t.Fatalf("agents = %+v, want alpha (the default) then zeta", cfg.Agents)
	}
	if a := cfg.Agents[0]; a.Model != "google/gemini-2.5-flash" || len(a.Fallbacks) != 0 {
		t.Errorf("alpha: model %q fallbacks %v: the OAuth-only provider's model should give way to the fallback", a.Model, a.Fallbacks)
	}
	if z := cfg.Agents[1]; z.Model != "anthropic/claude-opus-4-6" {
		t.Errorf("zeta model = %q", z.Model)
	}
	d := cfg.Channels.Discord
	if d["token"] != "${DISCORD_BOT_TOKEN}" || !equal(d["groups"], []any{"222"}) || d["requireMention"] != false ||
		d["dmPolicy"] != "open" || !equal(d["allowFrom"], []any{"*"}) {
		t.Errorf("discord = %v", d)
	}
	report := fmtReport(p.Report)
	for _, want := range []string{"provider openai-codex: it signs in by OAuth", "skills []", "channels.general: reef allows Discord channels by id",
		"guilds.333: reef allows Discord channels by id, not whole guilds", "exec SecretRef"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "--from") {
		t.Errorf("missing directory: %v", err)
	}
}
