package agent

import (
	"strings"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
)

// EstimateTokens estimates how many tokens s costs: about 4 characters per token for Latin text,
// about 2 for other alphabets (Cyrillic, Greek, Arabic...), one per CJK character. It is meant
// for budgeting, not billing; it does not allocate.
func EstimateTokens(s string) int {
	units, cjk := 0, 0 // units: quarter tokens
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			units++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size - 1
		if isCJK(r) {
			cjk++
		} else {
			units += 2
		}
	}
	return cjk + (units+3)/4
}

// isCJK reports whether r is a Chinese, Japanese or Korean character (or full-width form), which
// tokenizers spend about one token on.
func isCJK(r rune) bool {
	switch {
	case r >= 0x2E80 && r <= 0x9FFF: // radicals, CJK punctuation, kana, Bopomofo, unified ideographs
		return true
	case r >= 0xAC00 && r <= 0xD7AF: // Hangul syllables
		return true
	case r >= 0xF900 && r <= 0xFAFF, r >= 0xFF00 && r <= 0xFFEF: // compatibility ideographs, full-width forms
		return true
	case r >= 0x20000 && r <= 0x3FFFF: // extension planes
		return true
	}
	return false
}

// perMessageTokens is the framing overhead of one chat message (role, separators).
const perMessageTokens = 4

// EstimateMessages estimates the tokens of a transcript as sent to a model: content, tool calls
// (name and arguments) and tool results, with a small overhead per message. Reasoning text is
// not counted: it is never sent back.
func EstimateMessages(msgs []messages.ChatMessage) int {
	n := 0
	for _, m := range msgs {
		n += perMessageTokens + EstimateTokens(m.Content)
		for _, c := range m.ToolCalls {
			n += perMessageTokens + EstimateTokens(c.Name) + EstimateTokens(c.Arguments)
		}
		if m.Role == messages.RoleTool {
			n += EstimateTokens(m.ToolName) + 2
		}
	}
	return n
}

// contextWindows maps model-name prefixes to context windows in tokens; more specific prefixes
// come first.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-5", 400_000},
	{"o3", 200_000},
	{"o4", 200_000},
	{"claude-", 200_000},
	{"gemini-2.5", 1_048_576},
	{"gemini-2.0", 1_048_576},
	{"deepseek", 128_000},
	{"qwen", 128_000},
	{"llama3", 128_000},
	{"llama-3", 128_000},
}

// KnownContextWindow returns the context window of well-known models, matched by name prefix
// after dropping any "provider/" prefix ("openrouter/anthropic/claude-sonnet-4" is a claude-).
// ok is false for models it does not know; callers then use the configured window.
func KnownContextWindow(model string) (tokens int, ok bool) {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	model = strings.ToLower(strings.TrimSpace(model))
	for _, w := range contextWindows {
		if strings.HasPrefix(model, w.prefix) {
			return w.tokens, true
		}
	}
	return 0, false
}
