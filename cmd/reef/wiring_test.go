package main

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
)

func wiringConfig(t *testing.T, models map[string]configs.ModelConfig, ac configs.AgentConfig) *configs.Config {
	t.Helper()
	c := &configs.Config{
		Providers: map[string]configs.ProviderConfig{"local": {Type: "openai", BaseURL: "http://127.0.0.1:9/v1"}},
		Models:    models,
		Agents:    []configs.AgentConfig{ac},
	}
	configs.ApplyDefaults(c, func(k string) string {
		if k == "REEF_HOME" {
			return t.TempDir()
		}
		return ""
	})
	return c
}

func TestBuildAgentsRefusesSmallWindows(t *testing.T) {
	for name, ac := range map[string]configs.AgentConfig{
		"model":    {ID: "main", Model: "local/tiny"},
		"fallback": {ID: "main", Model: "local/big", Fallbacks: []string{"local/tiny"}},
	} {
		t.Run(name, func(t *testing.T) {
			c := wiringConfig(t, map[string]configs.ModelConfig{"local/tiny": {ContextWindow: 8192}}, ac)
			_, err := buildAgents(c, nil, nil, nil, nil)
			want := "agent main: model local/tiny has a context window of 8192 tokens; reef needs at least 16000"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "models.local/tiny.contextWindow") {
				t.Fatalf("buildAgents = %v, want an error naming the agent, the model, its window and the fix", err)
			}
		})
	}
}

func TestBuildAgentsCompaction(t *testing.T) {
	off := false
	c := wiringConfig(t, map[string]configs.ModelConfig{"local/m": {ContextWindow: 32000}}, configs.AgentConfig{
		ID: "main", Model: "local/m",
		Compaction: configs.CompactionConfig{ReserveTokens: 5000, KeepRecentTokens: 7000, MemoryFlush: &off},
	})
	agents, err := buildAgents(c, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := agents[0]
	if a.ContextWindow != 32000 || a.Compaction.ReserveTokens != 5000 || a.Compaction.KeepRecentTokens != 7000 || a.Compaction.MemoryFlush {
		t.Errorf("agent = window %d, compaction %+v; want the configured values", a.ContextWindow, a.Compaction)
	}
	c = wiringConfig(t, nil, configs.AgentConfig{ID: "main", Model: "local/m"})
	if agents, err = buildAgents(c, nil, nil, nil, nil); err != nil || !agents[0].Compaction.MemoryFlush {
		t.Errorf("default memory flush = %v (%v), want on", agents[0].Compaction.MemoryFlush, err)
	}
}

// TestMemoryWiring: an agent with memory off is not offered the memory tools and has no
// index; one with memory on gets both, with its provider's embeddings (auto).
func TestMemoryWiring(t *testing.T) {
	off := false
	c := wiringConfig(t, nil, configs.AgentConfig{ID: "main", Model: "local/m"})
	c.Agents = append(c.Agents, configs.AgentConfig{ID: "quiet", Model: "local/m", Workspace: t.TempDir(),
		Memory: configs.MemoryConfig{Enabled: &off}})
	mem := newMemory(c, nil, zerolog.Nop())
	agents, err := buildAgents(c, mem, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !agents[0].Policy.Allows("memory_search") || !agents[0].Policy.Allows("memory_get") {
		t.Errorf("main: memory tools not allowed: %v", agents[0].Policy.Allowed())
	}
	if agents[1].Policy.Allows("memory_search") || agents[1].Policy.Allows("memory_get") {
		t.Errorf("quiet (memory off) may use memory tools: %v", agents[1].Policy.Allowed())
	}
	if _, ok := mem.Index("main"); !ok {
		t.Error("main has no index")
	}
	if _, ok := mem.Index("quiet"); ok {
		t.Error("quiet (memory off) has an index")
	}
}
