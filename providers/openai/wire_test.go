package openai

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// reference is the body as one json.Marshal of the whole request would write it.
func reference(t *testing.T, c *Client, req providers.Request) any {
	t.Helper()
	req.System, req.SystemTail = req.System+req.SystemTail, ""
	wire := struct {
		chatRequest
		Tools []wireTool `json:"tools,omitempty"`
	}{c.buildRequest(req), wireTools(req.Tools)}
	b, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBodySplicesTheStablePrefix: the segmented body is the request, byte for byte in
// meaning, wherever the stable prefix ends (inside a rune, past the end, at 0) and whatever
// the prompt holds (quotes, HTML, line separators, invalid UTF-8); and requests with the same
// prefix share its encoded bytes. (Reading a body: reqbody's tests.)
func TestBodySplicesTheStablePrefix(t *testing.T) {
	c := New(Config{Name: "t", BaseURL: "http://127.0.0.1:1/v1"})
	prefix := "You are Reef. <b>Bold</b> & \"quoted\"\nLine\u2028sep — ünïcödé 🐚 \xff end.\n\n"
	tools := []messages.ToolSpec{{Name: "read", Description: "Reads <files>.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	user := []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi \"there\" {\"role\":\"system\",\"content\":\""}}
	emoji := strings.Index(prefix, "🐚")
	for _, tc := range []struct {
		name   string
		system string
		stable int
		tools  []messages.ToolSpec
	}{
		{"prefix and tail", prefix + "Now: 22:00.", len(prefix), tools},
		{"cut inside a rune", prefix + "Now: 22:00.", emoji + 2, tools},
		{"all stable", prefix, len(prefix), tools},
		{"stable past the end", prefix, len(prefix) + 10, nil},
		{"no stable prefix", prefix + "tail", 0, tools},
		{"no system prompt", "", 5, tools},
		{"no tools", prefix + "tail", len(prefix), nil},
		{"tail apart", prefix, len(prefix), tools},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providers.Request{Model: "m", System: tc.system, SystemStable: tc.stable, Messages: user, Tools: tc.tools, MaxTokens: 100}
			if tc.name == "tail apart" {
				req.SystemTail = "Now: 22:00.\n"
			}
			b, err := c.encode(req)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(bytes.Join(b, nil), &got); err != nil {
				t.Fatalf("body %s: %v", bytes.Join(b, nil), err)
			}
			if want := reference(t, c, req); !reflect.DeepEqual(got, want) {
				t.Errorf("body\n%s\nwant the same as\n%v", bytes.Join(b, nil), want)
			}
		})
	}

	a, err := c.encode(providers.Request{Model: "m", System: prefix + "one", SystemStable: len(prefix), Messages: user, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.encode(providers.Request{Model: "m", System: prefix + "two", SystemStable: len(prefix), Messages: user, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 2 || len(b) < 2 || &a[1][0] != &b[1][0] {
		t.Error("two requests with the same stable prefix do not share its encoded bytes")
	}
}
