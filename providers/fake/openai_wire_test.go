package fake

import (
	"encoding/json"
	"strings"
	"testing"

	gojson "github.com/grbit/go-json"
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
		if err := gojson.Unmarshal(body, &req); err != nil {
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
	// Escapes as other clients write them: each decodes as encoding/json decodes it.
	for _, raw := range []string{`"\u003cb\u003e"`, `"\ud83d\ude00 x"`, `"a\r\b\f\/"`, `"\u00e9\u2028"`, `"\u0041\\"`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		var c content
		if err := c.UnmarshalJSON([]byte(raw)); err != nil || string(c) != want {
			t.Errorf("%s decoded to %q (%v), want %q", raw, c, err, want)
		}
	}
	for _, raw := range []string{`"\u12"`, `"\x"`, `"\"`} {
		var c content
		if err := c.UnmarshalJSON([]byte(raw)); err == nil {
			t.Errorf("%s decoded to %q, want an error", raw, c)
		}
	}
	for raw, want := range map[string]string{`null`: "", `[{"type":"text","text":"a"},{"type":"text","text":"b\n"}]`: "ab\n"} {
		var c content
		if err := json.Unmarshal([]byte(raw), &c); err != nil || string(c) != want {
			t.Errorf("%s decoded to %q (%v), want %q", raw, c, err, want)
		}
	}
}
