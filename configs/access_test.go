package configs

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitModel(t *testing.T) {
	tests := []struct {
		ref, provider, model string
		ok                   bool
	}{
		{"openai/gpt-4.1-mini", "openai", "gpt-4.1-mini", true},
		{"openrouter/meta-llama/llama-3.1-70b", "openrouter", "meta-llama/llama-3.1-70b", true},
		{"gpt-4.1", "", "", false},
		{"/gpt", "", "", false},
		{"openai/", "", "", false},
		{"openai/gpt 4", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		p, m, err := SplitModel(tt.ref)
		if p != tt.provider || m != tt.model || (err == nil) != tt.ok {
			t.Errorf("SplitModel(%q) = %q, %q, %v; want %q, %q, ok=%v", tt.ref, p, m, err, tt.provider, tt.model, tt.ok)
		}
	}
}

func TestAgent(t *testing.T) {
	c := Config{Agents: []AgentConfig{{ID: "main"}, {ID: "coder", Model: "openai/x"}}}
	tests := []struct {
		id, wantID string
		ok         bool
	}{
		{"coder", "coder", true},
		{"main", "main", true},
		{"", "main", true},
		{"nope", "", false},
	}
	for _, tt := range tests {
		a, ok := c.Agent(tt.id)
		if a.ID != tt.wantID || ok != tt.ok {
			t.Errorf("Agent(%q) = %q, %v; want %q, %v", tt.id, a.ID, ok, tt.wantID, tt.ok)
		}
	}
}

func TestModel(t *testing.T) {
	c := Config{Models: map[string]ModelConfig{
		"openai/tiny":  {ContextWindow: 8192, MaxTokens: 512, ToolMode: "prompt"},
		"openai/gpt-x": {MaxTokens: 100},
	}}
	tests := []struct {
		ref  string
		want ModelConfig
	}{
		{"openai/tiny", ModelConfig{ContextWindow: 8192, MaxTokens: 512, ToolMode: "prompt"}},
		{"openai/gpt-x", ModelConfig{ContextWindow: 128000, MaxTokens: 100, ToolMode: "native"}},
		{"openai/gpt-4.1-mini", ModelConfig{ContextWindow: 1047576, ToolMode: "native"}},
		{"anthropic/claude-sonnet-4-5", ModelConfig{ContextWindow: 200000, ToolMode: "native"}},
		{"gemini/gemini-2.5-flash", ModelConfig{ContextWindow: 1048576, ToolMode: "native"}},
		{"openai/llama3.1", ModelConfig{ContextWindow: 131072, ToolMode: "native"}},
		{"bogus", ModelConfig{ContextWindow: 128000, ToolMode: "native"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, c.Model(tt.ref)); diff != "" {
			t.Errorf("Model(%q) (-want +got):\n%s", tt.ref, diff)
		}
	}
}

func TestSecrets(t *testing.T) {
	c := Config{
		Providers: map[string]ProviderConfig{
			"openai":    {APIKey: "sk-open", BaseURL: "https://not-a-secret"},
			"anthropic": {APIKey: "sk-ant"},
			"local":     {BaseURL: "http://127.0.0.1:11434/v1"},
			"copy":      {APIKey: "sk-open"},
		},
		Agents: []AgentConfig{{ID: "main", Model: "openai/gpt"}},
	}
	want := []string{"sk-ant", "sk-open"}
	if diff := cmp.Diff(want, c.Secrets()); diff != "" {
		t.Errorf("Secrets() (-want +got):\n%s", diff)
	}
	if got := (&Config{}).Secrets(); len(got) != 0 {
		t.Errorf("Secrets() of an empty config = %q, want none", got)
	}
}

// TestSecretsFindsNestedTokens checks the reflection walk on a shape like a future channel
// section: tokens behind pointers, in maps and slices.
func TestSecretsFindsNestedTokens(t *testing.T) {
	type account struct {
		BotToken string `yaml:"botToken"`
		Name     string `yaml:"name"`
	}
	type channels struct {
		Telegram *account           `yaml:"telegram"`
		Feishu   map[string]account `yaml:"feishu"`
		Extra    []struct {
			AppSecret  string `yaml:"appSecret"`
			EncryptKey string `yaml:"encryptKey"`
		} `yaml:"extra"`
	}
	v := channels{
		Telegram: &account{BotToken: "123:abc", Name: "bot"},
		Feishu:   map[string]account{"main": {BotToken: "t-2", Name: "lark"}},
	}
	v.Extra = append(v.Extra, struct {
		AppSecret  string `yaml:"appSecret"`
		EncryptKey string `yaml:"encryptKey"`
	}{"s3", "k4"})
	set := map[string]bool{}
	collectSecrets(reflectValue(&v), false, set)
	want := map[string]bool{"123:abc": true, "t-2": true, "s3": true, "k4": true}
	if diff := cmp.Diff(want, set); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
