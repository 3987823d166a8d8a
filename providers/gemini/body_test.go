package gemini

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// TestBodySharesThePromptAndTools: the encoded body is buildRequest's request, the same in
// meaning however the prompt is cut (inside a rune, past its end, at 0, a blank part) and
// whatever it holds (quotes, HTML, line separators, invalid UTF-8); and requests with the
// same stable prefix and tools share their encoded bytes.
func TestBodySharesThePromptAndTools(t *testing.T) {
	c := New(Config{Name: "t", APIKey: "k"})
	prefix := "You are Reef. <b>Bold</b> & \"quoted\"\nLine\u2028sep — ünïcödé 🐚 \xff end.\n\n"
	tools := []messages.ToolSpec{{Name: "read", Description: "Reads <files>.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string","format":"uri"}},"additionalProperties":false}`)},
		{Name: "odd", Parameters: json.RawMessage(`{not json`)}}
	user := []messages.ChatMessage{{Role: messages.RoleUser, Content: `hi "there" "systemInstruction":{"parts":[{"text":"`}}
	emoji := strings.Index(prefix, "🐚")
	for _, tc := range []struct {
		name     string
		system   string
		stable   int
		tail     string
		tools    []messages.ToolSpec
		thinking string
	}{
		{"prefix and tail", prefix + "Now: 22:00.", len(prefix), "", tools, ""},
		{"cut inside a rune", prefix + "Now: 22:00.", emoji + 2, "", tools, ""},
		{"all stable", prefix, len(prefix), "", tools, "high"},
		{"stable past the end", prefix, len(prefix) + 10, "", nil, ""},
		{"no stable prefix", prefix + "tail", 0, "", tools, ""},
		{"blank stable part", "  \n" + prefix, 3, "", tools, ""},
		{"blank prompt", "  \n", 2, " ", tools, ""},
		{"no system prompt", "", 5, "", tools, ""},
		{"no tools", prefix + "tail", len(prefix), "", nil, "low"},
		{"tail apart", prefix, len(prefix), "Now: 22:00.\n", tools, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providers.Request{Model: "gemini-fake", System: tc.system, SystemStable: tc.stable, SystemTail: tc.tail,
				Messages: user, Tools: tc.tools, MaxTokens: 100, Reasoning: tc.thinking}
			b, err := c.encode(req)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(bytes.Join(b, nil), &got); err != nil {
				t.Fatalf("body %s: %v", bytes.Join(b, nil), err)
			}
			ref, err := json.Marshal(buildRequest(req))
			if err != nil {
				t.Fatal(err)
			}
			json.Unmarshal(ref, &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body\n%s\nwant the same as\n%s", bytes.Join(b, nil), ref)
			}
		})
	}
	a, _ := c.encode(providers.Request{Model: "m", System: prefix + "one", SystemStable: len(prefix), Messages: user, Tools: tools})
	b, _ := c.encode(providers.Request{Model: "m", System: prefix + "two", SystemStable: len(prefix), Messages: user, Tools: tools})
	if len(a) != 5 || len(b) != 5 || &a[1][0] != &b[1][0] || &a[3][0] != &b[3][0] {
		t.Errorf("two requests with the same stable prefix and tools do not share their encoded bytes (%d, %d segments)", len(a), len(b))
	}
}

// BenchmarkEncodeFirstTurn: the body of a first turn's size (a 10 KB stable system prompt,
// eight tools, a short message), as every request of a burst encodes it.
func BenchmarkEncodeFirstTurn(b *testing.B) {
	tools := make([]messages.ToolSpec, 8)
	for i := range tools {
		tools[i] = messages.ToolSpec{Name: "tool" + string(rune('a'+i)), Description: strings.Repeat("does \"things\".\n ", 45),
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	}
	stable := strings.Repeat("You are a \"helpful\" assistant.\n", 340)
	req := providers.Request{Model: "m", System: stable, SystemStable: len(stable), SystemTail: "Time: 22:00.\n", Tools: tools,
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "please answer bm-1-0"}}}
	c := New(Config{APIKey: "k"})
	b.ReportAllocs()
	for b.Loop() {
		body, err := c.encode(req)
		if err != nil || body.Len() < 18000 {
			b.Fatal(err, body.Len())
		}
	}
}
