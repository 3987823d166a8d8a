package configs

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestApplyDefaultsFromEnvironmentOnly(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		providers map[string]ProviderConfig
		model     string
	}{
		{
			name:      "openai key",
			env:       map[string]string{"OPENAI_API_KEY": "sk-o"},
			providers: map[string]ProviderConfig{"openai": {Type: "openai", APIKey: "sk-o"}},
			model:     "openai/gpt-4.1-mini",
		},
		{
			name:      "openai base url alone (Ollama)",
			env:       map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"},
			providers: map[string]ProviderConfig{"openai": {Type: "openai", BaseURL: "http://127.0.0.1:11434/v1"}},
			model:     "openai/gpt-4.1-mini",
		},
		{
			name:      "anthropic",
			env:       map[string]string{"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "https://proxy.example/v1"},
			providers: map[string]ProviderConfig{"anthropic": {Type: "anthropic", APIKey: "sk-a", BaseURL: "https://proxy.example/v1"}},
			model:     "anthropic/claude-sonnet-4-5",
		},
		{
			name:      "gemini",
			env:       map[string]string{"GEMINI_API_KEY": "g"},
			providers: map[string]ProviderConfig{"gemini": {Type: "gemini", APIKey: "g"}},
			model:     "gemini/gemini-2.5-flash",
		},
		{
			name: "openai preferred over the others",
			env:  map[string]string{"GEMINI_API_KEY": "g", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"},
			providers: map[string]ProviderConfig{
				"openai": {Type: "openai", APIKey: "o"}, "anthropic": {Type: "anthropic", APIKey: "a"}, "gemini": {Type: "gemini", APIKey: "g"},
			},
			model: "openai/gpt-4.1-mini",
		},
		{
			name:      "anthropic preferred over gemini",
			env:       map[string]string{"GEMINI_API_KEY": "g", "ANTHROPIC_API_KEY": "a"},
			providers: map[string]ProviderConfig{"anthropic": {Type: "anthropic", APIKey: "a"}, "gemini": {Type: "gemini", APIKey: "g"}},
			model:     "anthropic/claude-sonnet-4-5",
		},
		{
			name:      "REEF_MODEL wins",
			env:       map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "REEF_MODEL": "openai/qwen3-32b"},
			providers: map[string]ProviderConfig{"openai": {Type: "openai", BaseURL: "http://127.0.0.1:8000/v1"}},
			model:     "openai/qwen3-32b",
		},
		{
			name:  "nothing set",
			env:   map[string]string{},
			model: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env["REEF_HOME"] = "/srv/reef"
			var c Config
			ApplyDefaults(&c, envOf(tt.env))
			if diff := cmp.Diff(tt.providers, c.Providers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
			if len(c.Agents) != 1 {
				t.Fatalf("got %d agents, want 1", len(c.Agents))
			}
			if got := c.Agents[0].Model; got != tt.model {
				t.Errorf("model = %q, want %q", got, tt.model)
			}
		})
	}
}

func TestApplyDefaultsValues(t *testing.T) {
	c := Config{
		Providers: map[string]ProviderConfig{"openai": {BaseURL: "http://file/v1"}, "local": {BaseURL: "http://x/v1"}},
		Agents:    []AgentConfig{{}, {ID: "helper", Model: "local/m", Limits: AgentLimits{MaxToolCalls: 7, LoopStopAt: 6}}},
		LLM:       LLMConfig{MaxRetries: 1},
		Log:       LogConfig{File: "~/logs/reef.log"},
	}
	ApplyDefaults(&c, envOf(map[string]string{"HOME": "/home/u", "OPENAI_API_KEY": "from-env"}))

	twenty := 20
	want := Config{
		Home:    "/home/u/.reef",
		DataDir: "/home/u/.reef/data",
		// The file declares openai, so OPENAI_API_KEY does not replace it.
		Providers: map[string]ProviderConfig{
			"openai": {Type: "openai", BaseURL: "http://file/v1"},
			"local":  {Type: "local", BaseURL: "http://x/v1"},
		},
		Agents: []AgentConfig{
			{ID: "main", Model: "openai/gpt-4.1-mini", Workspace: "/home/u/.reef/workspace",
				Limits: AgentLimits{MaxToolCalls: 50, TurnTimeoutSeconds: 600, LoopWarnAt: 10, LoopStopAt: 20, MaxReplyChunks: 20}},
			{ID: "helper", Model: "local/m", Workspace: "/home/u/.reef/workspace-helper",
				Limits: AgentLimits{MaxToolCalls: 7, TurnTimeoutSeconds: 600, LoopWarnAt: 3, LoopStopAt: 6, MaxReplyChunks: 20}},
		},
		LLM: LLMConfig{MaxRetries: 1, IdleTimeoutSeconds: 90, MaxRetryAfterSeconds: 30,
			MaxAnswerChars: 100000, StreamTimeoutSeconds: 600, OutageWaitMinutes: 60},
		Session: SessionConfig{IdleMinutes: 10, DMScope: "per-channel-peer",
			RateLimit: RateLimitConfig{Messages: &twenty, PerSeconds: 60}},
		Tools: ToolsConfig{Exec: ExecConfig{TimeoutSeconds: 120, MaxTimeoutSeconds: 1800, MaxOutputBytes: 65536,
			Sandbox: "auto", Limits: ExecLimitsConfig{Processes: 256, FileSizeMB: 1024, CPUSeconds: 600, MemoryMB: 4096},
			Background: ExecBackgroundConfig{MaxRunning: 4, MaxTotal: 32, MaxKept: 16, KeepFinishedMinutes: 60, OutputBytes: 1 << 20},
			Approvals:  "owner", ApprovalTimeoutSeconds: 600}},
		Log:     LogConfig{Level: "info", File: "/home/u/logs/reef.log"},
		Backup:  BackupConfig{Keep: DefaultBackupKeep},
		Gateway: GatewayConfig{HTTP: GatewayHTTPConfig{Listen: DefaultHTTPListen}},
	}
	if diff := cmp.Diff(want, c, cmpopts.IgnoreUnexported(Config{})); diff != "" {
		t.Errorf("ApplyDefaults (-want +got):\n%s", diff)
	}
}

func TestApplyDefaultsReefHome(t *testing.T) {
	var c Config
	ApplyDefaults(&c, envOf(map[string]string{"REEF_HOME": "~/reefhome", "HOME": "/home/u"}))
	if c.Home != "/home/u/reefhome" || c.DataDir != "/home/u/reefhome/data" || c.Agents[0].Workspace != "/home/u/reefhome/workspace" {
		t.Errorf("home, dataDir, workspace = %q, %q, %q; want them under /home/u/reefhome", c.Home, c.DataDir, c.Agents[0].Workspace)
	}
}

func TestSearchFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   WebSearchConfig
		env  map[string]string
		want WebSearchConfig
	}{
		{"nothing set", WebSearchConfig{}, nil, WebSearchConfig{}},
		{"brave key first", WebSearchConfig{}, map[string]string{"TAVILY_API_KEY": "t", "BRAVE_API_KEY": "b"}, WebSearchConfig{Provider: "brave", APIKey: "b"}},
		{"searxng url", WebSearchConfig{}, map[string]string{"SEARXNG_URL": "http://s"}, WebSearchConfig{Provider: "searxng", BaseURL: "http://s"}},
		{"named provider takes its key", WebSearchConfig{Provider: "tavily"}, map[string]string{"BRAVE_API_KEY": "b", "TAVILY_API_KEY": "t"}, WebSearchConfig{Provider: "tavily", APIKey: "t"}},
		{"file wins", WebSearchConfig{Provider: "brave", APIKey: "f"}, map[string]string{"BRAVE_API_KEY": "b"}, WebSearchConfig{Provider: "brave", APIKey: "f"}},
	} {
		got := tt.in
		searchFromEnv(&got, func(k string) string { return tt.env[k] })
		if got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestSearchKeyIsASecret(t *testing.T) {
	c := &Config{}
	c.Tools.Web.Search = WebSearchConfig{Provider: "brave", APIKey: "BSA-search-key-123456"}
	if !slices.Contains(c.Secrets(), "BSA-search-key-123456") {
		t.Errorf("Secrets() = %v, want the search key", c.Secrets())
	}
}
