package agent

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
)

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{"empty", "", 0},
		{"one char", "a", 1},
		{"latin", strings.Repeat("abcd", 100), 100},
		{"english sentence", "The quick brown fox jumps over the lazy dog.", 11},
		{"chinese", "你好世界", 4},
		{"japanese kana and kanji", "こんにちは世界", 7},
		{"korean", "안녕하세요", 5},
		{"mixed", "hello 世界", 2 + 2}, // 6 Latin chars → 2, 2 CJK → 2
		{"cyrillic", "привет", 3},    // 6 runes at 2 chars per token
		{"invalid bytes", "\xff\xfe", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.s); got != tt.want {
				t.Errorf("EstimateTokens(%q) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}

func TestEstimateTokensDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("mixed 文本 text ", 1000)
	if n := testing.AllocsPerRun(100, func() { EstimateTokens(s) }); n != 0 {
		t.Errorf("EstimateTokens allocates %.0f times per call", n)
	}
}

func TestEstimateMessages(t *testing.T) {
	msgs := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: strings.Repeat("a", 400)}, // 4 + 100
		{Role: messages.RoleAssistant, Reasoning: strings.Repeat("r", 4000), ToolCalls: []messages.ToolCall{ // 4 + (4 + 1 + 4)
			{ID: "c1", Name: "read", Arguments: `{"path":"a.md"}`},
		}},
		{Role: messages.RoleTool, ToolCallID: "c1", ToolName: "read", Content: strings.Repeat("b", 40)}, // 4 + 10 + 1 + 2
	}
	if got, want := EstimateMessages(msgs), 104+13+17; got != want {
		t.Errorf("EstimateMessages = %d, want %d", got, want)
	}
	if got := EstimateMessages(nil); got != 0 {
		t.Errorf("EstimateMessages(nil) = %d, want 0", got)
	}
}

func TestKnownContextWindow(t *testing.T) {
	tests := []struct {
		model string
		want  int
		ok    bool
	}{
		{"gpt-4.1", 1_047_576, true},
		{"gpt-4.1-mini", 1_047_576, true},
		{"gpt-4o-mini", 128_000, true},
		{"openai/gpt-5-mini", 400_000, true},
		{"o3-mini", 200_000, true},
		{"o4-mini", 200_000, true},
		{"openrouter/anthropic/claude-sonnet-4-5", 200_000, true},
		{"Claude-Opus-4", 200_000, true},
		{"gemini-2.5-pro", 1_048_576, true},
		{"google/gemini-2.0-flash", 1_048_576, true},
		{"deepseek-chat", 128_000, true},
		{"qwen2.5:7b", 128_000, true},
		{"ollama/llama3.1:8b", 128_000, true},
		{"gpt-4", 0, false},
		{"mistral-large", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := KnownContextWindow(tt.model)
		if got != tt.want || ok != tt.ok {
			t.Errorf("KnownContextWindow(%q) = %d, %v; want %d, %v", tt.model, got, ok, tt.want, tt.ok)
		}
	}
}

func BenchmarkEstimateTokens(b *testing.B) {
	s := strings.Repeat("Some English text with 中文 mixed in. ", 2000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		EstimateTokens(s)
	}
}
