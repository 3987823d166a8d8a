package configs

import (
	"strings"
	"testing"
)

func TestEmbeddingProvider(t *testing.T) {
	provs := map[string]ProviderConfig{
		"openai":    {Type: "openai", APIKey: "k"},
		"anthropic": {Type: "anthropic", APIKey: "k"},
		"local":     {Type: "openai", BaseURL: "http://127.0.0.1:1/v1"},
		"gemini":    {Type: "gemini", APIKey: "k"},
	}
	off := false
	tests := []struct {
		name            string
		global, agent   MemoryConfig
		model           string
		want, wantModel string
	}{
		{"auto openai", MemoryConfig{}, MemoryConfig{}, "openai/gpt-4.1", "openai", DefaultOpenAIEmbeddingModel},
		{"auto local openai-compatible", MemoryConfig{Provider: "auto"}, MemoryConfig{}, "local/qwen", "local", DefaultOpenAIEmbeddingModel},
		{"auto anthropic: keyword only", MemoryConfig{}, MemoryConfig{}, "anthropic/claude", "", ""},
		{"auto gemini", MemoryConfig{}, MemoryConfig{}, "gemini/gemini-2.5-flash", "gemini", DefaultGeminiEmbeddingModel},
		{"none", MemoryConfig{Provider: "none"}, MemoryConfig{}, "openai/gpt-4.1", "", ""},
		{"explicit openai under anthropic", MemoryConfig{Provider: "openai", Model: "m3"}, MemoryConfig{}, "anthropic/claude", "openai", "m3"},
		{"agent overrides", MemoryConfig{Provider: "openai"}, MemoryConfig{Provider: "none"}, "openai/gpt-4.1", "", ""},
		{"agent model", MemoryConfig{}, MemoryConfig{Model: "nomic-embed-text"}, "local/qwen", "local", "nomic-embed-text"},
		{"disabled agent still resolves", MemoryConfig{}, MemoryConfig{Enabled: &off}, "openai/gpt-4.1", "openai", DefaultOpenAIEmbeddingModel},
	}
	for _, tt := range tests {
		c := &Config{Providers: provs, Memory: tt.global}
		a := AgentConfig{ID: "main", Model: tt.model, Memory: tt.agent}
		name, _, model := c.EmbeddingProvider(a)
		if name != tt.want || model != tt.wantModel {
			t.Errorf("%s: got %q %q, want %q %q", tt.name, name, model, tt.want, tt.wantModel)
		}
	}
}

func TestValidateMemory(t *testing.T) {
	tests := []struct {
		m    MemoryConfig
		want string
	}{
		{MemoryConfig{Provider: "cohere"}, `memory.provider: "cohere" is not valid`},
		{MemoryConfig{Sources: []string{"sessions"}}, "leaves out the notes"},
		{MemoryConfig{Sources: []string{"web"}}, `"web" is not a source`},
		{MemoryConfig{ChunkTokens: 100, OverlapTokens: 100}, "overlapTokens: 100 is not below chunkTokens"},
		{MemoryConfig{ChunkTokens: -1}, "chunkTokens: -1 is negative"},
		{MemoryConfig{ChunkTokens: 8}, "too small"},
	}
	for _, tt := range tests {
		var v validator
		v.memory("memory", tt.m)
		if len(v.problems) == 0 || !strings.Contains(v.problems[0].Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.m, v.problems, tt.want)
		}
	}
	var v validator
	v.memory("memory", MemoryConfig{Provider: "auto", Sources: []string{"memory"}, ChunkTokens: 400, OverlapTokens: 80})
	v.memory("agents[0].memory", MemoryConfig{Sources: []string{"memory", "sessions"}})
	if len(v.problems) != 0 {
		t.Errorf("a good block: %v", v.problems)
	}
}
