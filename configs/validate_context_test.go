package configs

import (
	"strings"
	"testing"
)

func TestValidateContextWindow(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"16k is enough", func(c *Config) {
			c.Models = map[string]ModelConfig{"openai/small": {ContextWindow: 16000}}
			c.Agents[0].Model = "openai/small"
		}, nil},
		{"model under 16k", func(c *Config) {
			c.Models = map[string]ModelConfig{"openai/tiny": {ContextWindow: 8192}}
			c.Agents[0].Model = "openai/tiny"
		}, []string{`agents[0].model: agent "main" uses model openai/tiny, whose context window is 8192 tokens; reef needs at least 16000 ` +
			`(the system prompt, the tools, a summary and the recent messages must fit): choose a model with a larger window, ` +
			`or set models["openai/tiny"].contextWindow if the model's real window is larger`}},
		{"fallback under 16k", func(c *Config) {
			c.Models = map[string]ModelConfig{"openai/tiny": {ContextWindow: 4096}}
			c.Agents[0].Fallbacks = []string{"openai/gpt-4o", "openai/tiny"}
		}, []string{`agents[0].fallbacks[1]: agent "main" uses model openai/tiny, whose context window is 4096 tokens; reef needs at least 16000 ` +
			`(the system prompt, the tools, a summary and the recent messages must fit): choose a model with a larger window, ` +
			`or set models["openai/tiny"].contextWindow if the model's real window is larger`}},
		{"/model option under 16k", func(c *Config) {
			c.Models = map[string]ModelConfig{"openai/tiny": {ContextWindow: 8000}}
			c.Agents[0].Models = []string{"openai/tiny"}
		}, []string{`agents[0].models[0]: agent "main" uses model openai/tiny, whose context window is 8000 tokens; reef needs at least 16000 ` +
			`(the system prompt, the tools, a summary and the recent messages must fit): choose a model with a larger window, ` +
			`or set models["openai/tiny"].contextWindow if the model's real window is larger`}},
		{"reserve too large", func(c *Config) {
			c.Models = map[string]ModelConfig{"openai/small": {ContextWindow: 32000}}
			c.Agents[0].Model = "openai/small"
			c.Agents[0].Compaction.ReserveTokens = 20000
		}, []string{`agents[0].compaction.reserveTokens: 20000 is more than half of the 32000-token window of openai/small, ` +
			`which leaves too little for the conversation: use at most 16000, or 0 for the default`}},
		{"negative compaction numbers", func(c *Config) {
			c.Agents[0].Compaction.ReserveTokens = -1
			c.Agents[0].Compaction.KeepRecentTokens = -5
		}, []string{
			`agents[0].compaction.reserveTokens: -1 is negative: use 0 for the default or a positive number`,
			`agents[0].compaction.keepRecentTokens: -5 is negative: use 0 for the default or a positive number`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.change(&c)
			got := errLines(c.Validate())
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Validate() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestCompactionDefaults(t *testing.T) {
	c := validConfig()
	a := c.Agents[0].Compaction
	if a.KeepRecentTokens != 0 || a.ReserveTokens != 0 || !a.Flush() {
		t.Errorf("compaction defaults = %+v (flush %v), want 0 for both token counts (derived at run time) and the flush on",
			a, a.Flush())
	}
	off := false
	a.MemoryFlush = &off
	if a.Flush() {
		t.Error("memoryFlush: false leaves the flush on")
	}
}
