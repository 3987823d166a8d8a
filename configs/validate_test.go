package configs

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// validConfig returns a configuration that passes Validate; tests break one thing each.
func validConfig() Config {
	c := Config{Providers: map[string]ProviderConfig{"openai": {APIKey: "sk"}}}
	ApplyDefaults(&c, envOf(map[string]string{"HOME": "/home/u"}))
	return c
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string // every line of the error, in order; nil means valid
	}{
		{"valid", func(c *Config) {}, nil},
		{
			name:   "model provider missing, known name",
			change: func(c *Config) { c.Agents[0].Model = "anthropic/claude-sonnet-4-5" },
			want:   []string{`agents[0].model: "anthropic/claude-sonnet-4-5" needs provider "anthropic": set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a compatible server), or add providers.anthropic to reef.yaml`},
		},
		{
			name:   "fallback provider missing, other name",
			change: func(c *Config) { c.Agents[0].Fallbacks = []string{"openai/gpt-4.1", "groq/llama"} },
			want:   []string{`agents[0].fallbacks[1]: "groq/llama" needs provider "groq": add providers.groq (with type and baseUrl) to reef.yaml`},
		},
		{
			name: "model provider without key or url",
			change: func(c *Config) {
				c.Providers["gemini"] = ProviderConfig{Type: "gemini"}
				c.Agents[0].Model = "gemini/gemini-2.5-pro"
			},
			want: []string{`agents[0].model: "gemini/gemini-2.5-pro" needs provider "gemini", which has neither apiKey nor baseUrl: set GEMINI_API_KEY (or GEMINI_BASE_URL for a compatible server), or add providers.gemini to reef.yaml`},
		},
		{
			name:   "model without provider part",
			change: func(c *Config) { c.Agents[0].Model = "gpt-4.1" },
			want:   []string{`agents[0].model: "gpt-4.1" is not a model reference: write provider/model, e.g. openai/gpt-4.1-mini`},
		},
		{
			name: "subagents: unknown agent, negative limit, too deep",
			change: func(c *Config) {
				c.Agents[0].Subagents = SubagentsConfig{AllowAgents: []string{"*", "ops"}, MaxChildren: -1, MaxSpawnDepth: 9}
			},
			want: []string{
				`agents[0].subagents.maxChildren: -1 is negative: use 0 for the default or a positive number`,
				`agents[0].subagents.maxSpawnDepth: 9 is more than 5: sub-agents nested that deep multiply model calls; use 1 to 5`,
				`agents[0].subagents.allowAgents[1]: "ops" is not the id of a configured agent`,
			},
		},
		{
			name: "skills: empty, a path, in both lists",
			change: func(c *Config) {
				c.Agents[0].Skills = SkillPolicy{Allow: []string{"weather", "", "skills/pdf"}, Deny: []string{"weather"}}
			},
			want: []string{
				`agents[0].skills.allow[1]: empty: give a skill name (see reef skills list)`,
				`agents[0].skills.allow[2]: "skills/pdf" is not a skill name: give the name from reef skills list, not a path`,
				`agents[0].skills.deny[0]: "weather" is also in allow; deny wins, so remove it from one list`,
			},
		},
		{
			name:   "bad dmScope",
			change: func(c *Config) { c.Session.DMScope = "per-user" },
			want:   []string{`session.dmScope: "per-user" is not valid: use one of main, per-peer, per-channel-peer, per-account-channel-peer`},
		},
		{
			name: "duplicate and malformed agent ids",
			change: func(c *Config) {
				c.Agents = append(c.Agents, AgentConfig{ID: "main", Model: "openai/x"}, AgentConfig{ID: "Big Agent", Model: "openai/x"}, AgentConfig{Model: "openai/x"})
			},
			want: []string{
				`agents[1].id: "main" is already the id of agents[0]: agent ids must be unique`,
				`agents[2].id: "Big Agent" may use only a-z, 0-9, '_' and '-'`,
				`agents[3].id: required for every agent but the first`,
			},
		},
		{
			name:   "bad base URL",
			change: func(c *Config) { c.Providers["openai"] = ProviderConfig{Type: "openai", BaseURL: "localhost:11434/v1"} },
			want:   []string{`providers.openai.baseUrl: "localhost:11434/v1" is not an http(s) URL: write it like https://api.example.com/v1`},
		},
		{
			name: "bad provider type",
			change: func(c *Config) {
				c.Providers["ollama"] = ProviderConfig{Type: "ollama", BaseURL: "http://127.0.0.1:11434/v1"}
			},
			want: []string{`providers.ollama.type: "ollama" is not a provider type: use openai, anthropic or gemini (Ollama, vLLM, OpenRouter and most others speak openai)`},
		},
		{
			name: "negative numbers, log and tool mode",
			change: func(c *Config) {
				c.LLM.MaxRetries = -1
				c.Agents[0].Limits.MaxToolCalls = -2
				c.Log.Level, c.Log.Format = "verbose", "xml"
				c.Models = map[string]ModelConfig{"openai/m": {ToolMode: "json"}}
			},
			want: []string{
				`agents[0].limits.maxToolCalls: -2 is negative: use 0 for the default or a positive number`,
				`models["openai/m"].toolMode: "json" is not valid: use one of native, prompt`,
				`llm.maxRetries: -1 is negative: use 0 for the default or a positive number`,
				`log.level: "verbose" is not valid: use one of debug, info, warn, error`,
				`log.format: "xml" is not valid: use one of console, json`,
			},
		},
		{
			name:   "exec timeout above maximum",
			change: func(c *Config) { c.Tools.Exec.TimeoutSeconds = 4000 },
			want:   []string{`tools.exec.timeoutSeconds: 4000 is above tools.exec.maxTimeoutSeconds (1800): lower it or raise the maximum`},
		},
		{
			name: "exec sandbox",
			change: func(c *Config) {
				c.Tools.Exec.Sandbox = "docker"
				c.Tools.Exec.Limits.Processes = -2
				c.Tools.Exec.Writable = []string{"/ok", "relative"}
			},
			want: []string{
				`tools.exec.sandbox: "docker" is not valid: use one of auto, off, landlock, bwrap`,
				`tools.exec.limits.processes: -2 is not a limit: use a positive number, 0 for the default or -1 for none`,
				`tools.exec.writable[1]: "relative" is not an absolute path`,
			},
		},
		{
			name: "web allowPrivate",
			change: func(c *Config) {
				c.Tools.Web.AllowPrivate = []string{"10.0.0.0/8", "nas.lan", "192.168.1.5", "http://nas.lan/", "10.0.0.0/33"}
			},
			want: []string{
				`tools.web.allowPrivate[3]: "http://nas.lan/" is neither a CIDR (10.0.0.0/8), an IP address nor a host name`,
				`tools.web.allowPrivate[4]: "10.0.0.0/33" is neither a CIDR (10.0.0.0/8), an IP address nor a host name`,
			},
		},
		{
			name: "web search",
			change: func(c *Config) {
				c.Tools.Web.Search = WebSearchConfig{Provider: "bing", APIKey: "k"}
			},
			want: []string{`tools.web.search.provider: "bing" is not valid: use one of brave, tavily, searxng`},
		},
		{
			name: "web search needs",
			change: func(c *Config) {
				c.Tools.Web.Search = WebSearchConfig{Provider: "searxng", BaseURL: "127.0.0.1:8888"}
			},
			want: []string{`tools.web.search.baseUrl: "127.0.0.1:8888" is not an http(s) URL`},
		},
		{
			name: "exec approvals",
			change: func(c *Config) {
				c.Tools.Exec.Approvals = "guests"
				c.Tools.Exec.ApprovalTimeoutSeconds = -1
			},
			want: []string{
				`tools.exec.approvals: "guests" is not valid: use one of off, owner, always`,
				`tools.exec.approvalTimeoutSeconds: -1 is negative: use 0 for the default or a positive number`,
			},
		},
		{
			name:   "unset variable",
			change: func(c *Config) { c.unset = []unsetRef{{path: "providers.openai.apiKey", name: "OPENAI_API_KEY"}} },
			want:   []string{`providers.openai.apiKey: ${OPENAI_API_KEY} is not set: set OPENAI_API_KEY, or write ${OPENAI_API_KEY:-} to allow an empty value`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.change(&c)
			err := c.Validate()
			got := errLines(err)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Validate() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if errors.Is(err, ErrNoProvider) {
				t.Errorf("errors.Is(err, ErrNoProvider) = true with a provider configured")
			}
		})
	}
}

func TestValidateNoProvider(t *testing.T) {
	for name, c := range map[string]Config{
		"nothing":          {},
		"only empty ones":  {Providers: map[string]ProviderConfig{"openai": {Type: "openai"}}},
		"model set anyway": {Agents: []AgentConfig{{Model: "openai/gpt-4.1"}}},
	} {
		t.Run(name, func(t *testing.T) {
			ApplyDefaults(&c, envOf(map[string]string{"HOME": "/h"}))
			err := c.Validate()
			if !errors.Is(err, ErrNoProvider) {
				t.Fatalf("Validate() = %v, want ErrNoProvider", err)
			}
			if n := len(errLines(err)); n != 1 {
				t.Errorf("got %d problems, want only the missing provider: %v", n, err)
			}
		})
	}
}

func TestNoProviderHelp(t *testing.T) {
	help := NoProviderHelp()
	for _, want := range []string{
		"OPENAI_API_KEY", "REEF_MODEL=openai/gpt-4.1-mini", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
		"OPENAI_BASE_URL=http://127.0.0.1:11434/v1 REEF_MODEL=openai/llama3.1",
		"OPENAI_BASE_URL=http://127.0.0.1:8000/v1 REEF_MODEL=openai/<model>",
		"configs/reef.example.yaml",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("NoProviderHelp() lacks %q", want)
		}
	}
}

func TestValidateBackup(t *testing.T) {
	for _, tt := range []struct {
		every   string
		keep    int
		want    time.Duration
		problem string
	}{
		{"", 7, 24 * time.Hour, ""},
		{"off", 7, 0, ""},
		{"0", 7, 0, ""},
		{"6h", 3, 6 * time.Hour, ""},
		{"daily", 7, 0, `backup.every: "daily" is not a duration`},
		{"10ms", 7, 0, "backup.every: 10ms is under one second"},
		{"1h", -1, time.Hour, "backup.keep: -1 is not a count"},
	} {
		c := Config{Backup: BackupConfig{Every: tt.every, Keep: tt.keep}}
		var v validator
		c.validateBackup(&v)
		got := errors.Join(v.problems...)
		if tt.problem == "" && got != nil || tt.problem != "" && (got == nil || !strings.Contains(got.Error(), tt.problem)) {
			t.Errorf("every %q keep %d: problems %v, want %q", tt.every, tt.keep, got, tt.problem)
		}
		if d, err := c.Backup.Interval(); err == nil && d != tt.want {
			t.Errorf("every %q: Interval() = %v, want %v", tt.every, d, tt.want)
		}
	}
}
