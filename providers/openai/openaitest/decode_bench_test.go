package openaitest

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkDecodeRequest decodes a request shaped like reef's: a 10 KB system prompt, a
// user message and 5 KB of tool schemas.
func BenchmarkDecodeRequest(b *testing.B) {
	tools := make([]map[string]any, 8)
	for i := range tools {
		tools[i] = map[string]any{"type": "function", "function": map[string]any{"name": "tool", "description": strings.Repeat("does things. ", 30),
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string", "description": "a path"}}}}}
	}
	body, _ := json.Marshal(map[string]any{"model": "fake", "stream": true, "tools": tools, "messages": []map[string]any{
		{"role": "system", "content": strings.Repeat("## Section\nSome \"quoted\" rules for the agent to follow.\n", 180)},
		{"role": "user", "content": "[Telegram chat 1] hello there"},
	}})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var req chatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
		req.record()
	}
}

// TestContentDecodes: content decodes to the text encoding/json gives, on the fast path
// (simple escapes) and the fallback (\u escapes), and from null and arrays of parts.
func TestContentDecodes(t *testing.T) {
	for _, s := range []string{"", "plain", "a\nb\t\"c\" \\ /d", "<b>&</b> é \u2028 \x01 \r"} {
		raw, _ := json.Marshal(s)
		var c content
		if err := json.Unmarshal(raw, &c); err != nil || string(c) != s {
			t.Errorf("%s decoded to %q (%v), want %q", raw, c, err, s)
		}
	}
	for raw, want := range map[string]string{`null`: "", `[{"type":"text","text":"a"},{"type":"text","text":"b\n"}]`: "ab\n"} {
		var c content
		if err := json.Unmarshal([]byte(raw), &c); err != nil || string(c) != want {
			t.Errorf("%s decoded to %q (%v), want %q", raw, c, err, want)
		}
	}
}
