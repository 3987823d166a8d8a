// Package reqbodytest checks a client's shared-prefix request bodies (reqbody) against the
// request they stand for, and holds what the clients' body tests share.
package reqbodytest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody"
)

// Check encodes requests that cut and fill the system prompt every way a client must handle
// (inside a rune, past its end, at 0, blank parts; quotes, HTML, line separators, invalid
// UTF-8; tools with a schema that is not JSON; thinking on and off) and fails t unless each
// body means the same as reference, one json.Marshal of the whole request. It also checks
// that two requests with the same stable prefix and tools share their encoded bytes (a body
// of five segments: before the prefix, the prefix, after it, the tools, the closing brace).
// marker is a string the client's own splicing looks for; it is put in the user's message.
func Check(t *testing.T, encode func(providers.Request) (reqbody.Body, error), reference func(providers.Request) ([]byte, error), marker string) {
	t.Helper()
	prefix := "You are Reef. <b>Bold</b> & \"quoted\"\nLine\u2028sep — ünïcödé 🐚 \xff end.\n\n"
	tools := []messages.ToolSpec{{Name: "read", Description: "Reads <files>.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)},
		{Name: "odd", Parameters: json.RawMessage(`{not json`)}}
	user := []messages.ChatMessage{{Role: messages.RoleUser, Content: `hi "there" ` + marker}}
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
			req := providers.Request{Model: "m", System: tc.system, SystemStable: tc.stable, SystemTail: tc.tail,
				Messages: user, Tools: tc.tools, MaxTokens: 100, Reasoning: tc.thinking}
			b, err := encode(req)
			if err != nil {
				t.Fatal(err)
			}
			whole := bytes.Join(b, nil)
			if b.Len() != int64(len(whole)) {
				t.Errorf("Len %d, joined %d", b.Len(), len(whole))
			}
			var got, want any
			if err := json.Unmarshal(whole, &got); err != nil {
				t.Fatalf("body %s: %v", whole, err)
			}
			ref, err := reference(req)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(ref, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body\n%s\nwant the same as\n%s", whole, ref)
			}
		})
	}
	a, err := encode(providers.Request{Model: "m", System: prefix + "one", SystemStable: len(prefix), Messages: user, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	b, err := encode(providers.Request{Model: "m", System: prefix + "two", SystemStable: len(prefix), Messages: user, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 5 || len(b) != 5 || &a[1][0] != &b[1][0] || &a[3][0] != &b[3][0] {
		t.Errorf("two requests with the same stable prefix and tools do not share their encoded bytes (%d and %d segments)", len(a), len(b))
	}
}

// FirstTurn is a request of an agent's first turn's size: a 10 KB stable system prompt and
// a short tail, eight tools, a short message. For benchmarks.
func FirstTurn() providers.Request {
	tools := make([]messages.ToolSpec, 8)
	for i := range tools {
		tools[i] = messages.ToolSpec{Name: "tool" + string(rune('a'+i)), Description: strings.Repeat("does \"things\".\n ", 45),
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	}
	stable := strings.Repeat("You are a \"helpful\" assistant.\n", 340)
	return providers.Request{Model: "m", System: stable, SystemStable: len(stable), SystemTail: "Time: 22:00.\n", Tools: tools,
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "please answer bm-1-0"}}}
}

// ImageRequest is a user message with a saved photo whose bytes the Turn loaded (a vision
// model), and an older one whose image carries no bytes (stays a path in the text). Every
// client's image test encodes it; the PNG's bytes are "iVBORy1ieXRlcw==" in base64.
func ImageRequest() providers.Request {
	return providers.Request{Model: "m", System: "sys", Messages: []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "old [image: inbox/a.jpg]", Media: []messages.Media{{Kind: messages.MediaImage, Path: "inbox/a.jpg"}}},
		{Role: messages.RoleAssistant, Content: "seen"},
		{Role: messages.RoleUser, Content: "what is this? [image: inbox/b.png]", Media: []messages.Media{
			{Kind: messages.MediaImage, MIME: "image/png", Path: "inbox/b.png", Data: []byte("\x89PNG-bytes")}}},
	}}
}

// Decoded returns the body encode makes of req, decoded from JSON.
func Decoded(t *testing.T, encode func(providers.Request) (reqbody.Body, error), req providers.Request) map[string]any {
	t.Helper()
	body, err := encode(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body.Reader()); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	return out
}
