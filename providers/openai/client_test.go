package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

const canary = "sk-canary-3f9d2c7e1b8a4d6f"

// answer is what a stream produced, folded.
type answer struct {
	Text, Reasoning string
	Calls           []messages.ToolCall
	Usage           messages.Usage
	Stop            providers.StopReason
}

func drain(s providers.Stream) (answer, error) {
	var a answer
	defer s.Close()
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return a, nil
		}
		if err != nil {
			return a, err
		}
		switch ev.Kind {
		case providers.EventText:
			a.Text += ev.Text
		case providers.EventReasoning:
			a.Reasoning += ev.Text
		case providers.EventToolCall:
			a.Calls = append(a.Calls, ev.ToolCall)
		case providers.EventUsage:
			a.Usage = ev.Usage
		case providers.EventDone:
			a.Stop = ev.StopReason
		}
	}
}

func call(ctx context.Context, p providers.Provider, req providers.Request) (answer, error) {
	s, err := p.Stream(ctx, req)
	if err != nil {
		return answer{}, err
	}
	return drain(s)
}

// newClient starts a fake server playing replies and a client pointed at it.
func newClient(t *testing.T, replies ...fake.Reply) (*openai.Client, *fake.Script) {
	t.Helper()
	script := fake.NewScript(replies...)
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	return openai.New(openai.Config{BaseURL: srv.URL(), APIKey: canary, IdleTimeout: 2 * time.Second}), script
}

func TestStream(t *testing.T) {
	calls := []messages.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"notes/todo.md","limit":200}`},
		{ID: "call_b", Name: "exec", Arguments: `{"command":"ls -la","timeout":30}`},
	}
	usage := messages.Usage{InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 1000}
	tests := []struct {
		name  string
		reply fake.Reply
		want  answer
	}{
		{"text", fake.Reply{Text: "Hello, I am reef. How can I help?"},
			answer{Text: "Hello, I am reef. How can I help?", Stop: providers.StopEnd}},
		{"reasoning", fake.Reply{Reasoning: "The user greets me.", Text: "Hi!"},
			answer{Reasoning: "The user greets me.", Text: "Hi!", Stop: providers.StopEnd}},
		{"tool calls in pieces", fake.Reply{Text: "Let me look.", ToolCalls: calls},
			answer{Text: "Let me look.", Calls: calls, Stop: providers.StopToolUse}},
		{"malformed arguments stay as sent", fake.Reply{ToolCalls: []messages.ToolCall{{ID: "c", Name: "x", Arguments: `{"a":`}}},
			answer{Calls: []messages.ToolCall{{ID: "c", Name: "x", Arguments: `{"a":`}}, Stop: providers.StopToolUse}},
		{"usage", fake.Reply{Text: "ok", Usage: usage}, answer{Text: "ok", Usage: usage, Stop: providers.StopEnd}},
		{"unicode", fake.Reply{Text: "日本語のテキスト ✓ émoji 🎉"},
			answer{Text: "日本語のテキスト ✓ émoji 🎉", Stop: providers.StopEnd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newClient(t, tt.reply)
			got, err := call(context.Background(), c, providers.Request{Model: "gpt-test"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamGeneratesMissingToolCallIDs(t *testing.T) {
	c, _ := newClient(t, fake.Reply{ToolCalls: []messages.ToolCall{
		{Name: "a", Arguments: "{}"}, {Name: "b", Arguments: ""},
	}})
	got, err := call(context.Background(), c, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Calls) != 2 || got.Calls[0].ID == "" || got.Calls[0].ID == got.Calls[1].ID {
		t.Fatalf("calls %+v, want two with distinct generated ids", got.Calls)
	}
	if got.Calls[1].Arguments != "{}" {
		t.Errorf("empty arguments = %q, want {}", got.Calls[1].Arguments)
	}
}

func TestRequestShape(t *testing.T) {
	script := fake.NewScript()
	srv := openaitest.NewServer(script)
	defer srv.Close()
	c := openai.New(openai.Config{BaseURL: srv.URL() + "/", APIKey: canary, Header: map[string]string{"X-Title": "reef"}})
	transcript := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "list files"},
		{Role: messages.RoleAssistant, Reasoning: "private", ToolCalls: []messages.ToolCall{{ID: "c1", Name: "exec", Arguments: `{"command":"ls"}`}}},
		{Role: messages.RoleTool, ToolCallID: "c1", ToolName: "exec", Content: "a.txt"},
		{Role: messages.RoleSystem, Content: "Cron job fired."},
		{Role: messages.RoleAssistant, Content: "Done."},
	}
	req := providers.Request{
		Model: "qwen3", System: "You are reef.", Messages: transcript, MaxTokens: 512, Reasoning: "high",
		Tools: []messages.ToolSpec{{Name: "exec", Description: "Runs a command.", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	if _, err := call(context.Background(), c, req); err != nil {
		t.Fatal(err)
	}
	got := script.Requests()[0]
	wantMsgs := append([]messages.ChatMessage(nil), transcript...)
	wantMsgs[1].Reasoning = "" // never sent back
	wantMsgs[3] = messages.ChatMessage{Role: messages.RoleUser, Content: got.Messages[3].Content}
	if diff := cmp.Diff(wantMsgs, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.Messages[3].Content, "Cron job fired.") || !strings.Contains(strings.ToLower(got.Messages[3].Content), "system event") {
		t.Errorf("system event sent as %q, want a user message marked as a system event", got.Messages[3].Content)
	}
	if got.Model != "qwen3" || got.System != "You are reef." || !cmp.Equal(got.Tools, []string{"exec"}) {
		t.Errorf("model %q, system %q, tools %v", got.Model, got.System, got.Tools)
	}
	if h := got.Header; h["Authorization"][0] != "Bearer "+canary || h["X-Title"][0] != "reef" {
		t.Errorf("headers %v", h)
	}
	var body map[string]any
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"stream": true, "stream_options": map[string]any{"include_usage": true},
		"max_tokens": 512.0, "reasoning_effort": "high",
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "exec", "description": "Runs a command.", "parameters": map[string]any{"type": "object"}}}},
	}
	for k, v := range want {
		if diff := cmp.Diff(v, body[k]); diff != "" {
			t.Errorf("body[%q] (-want +got):\n%s", k, diff)
		}
	}
	first := body["messages"].([]any)[0].(map[string]any)
	if first["role"] != "system" || first["content"] != "You are reef." {
		t.Errorf("first message %v, want the system prompt", first)
	}
	if strings.Contains(string(got.Body), "private") {
		t.Error("reasoning was sent back to the model")
	}
}

func TestReasoningOffIsOmitted(t *testing.T) {
	c, script := newClient(t)
	if _, err := call(context.Background(), c, providers.Request{Reasoning: "off"}); err != nil {
		t.Fatal(err)
	}
	if body := string(script.Requests()[0].Body); strings.Contains(body, "reasoning_effort") || strings.Contains(body, "max_") {
		t.Errorf("body %s: want no reasoning_effort and no max tokens", body)
	}
}

func TestPing(t *testing.T) {
	c, _ := newClient(t)
	if err := c.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestCancelMidStream(t *testing.T) {
	c, _ := newClient(t, fake.Reply{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Stream(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel = %v, want context.Canceled", err)
	}
}

// redirect sends every request to the fake server, whatever host it names.
type redirect struct{ target string }

func (rt redirect) RoundTrip(r *http.Request) (*http.Response, error) {
	u, err := url.Parse(rt.target)
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
	return http.DefaultTransport.RoundTrip(r)
}

func TestMaxTokensFieldByHost(t *testing.T) {
	script := fake.NewScript()
	srv := openaitest.NewServer(script)
	defer srv.Close()
	hc := &http.Client{Transport: redirect{srv.URL()}}
	for _, base := range []string{"https://api.openai.com/v1", srv.URL()} {
		c := openai.New(openai.Config{BaseURL: base, HTTPClient: hc})
		if _, err := call(context.Background(), c, providers.Request{MaxTokens: 99}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := script.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if b := string(reqs[0].Body); !strings.Contains(b, `"max_completion_tokens":99`) || strings.Contains(b, `"max_tokens"`) {
		t.Errorf("api.openai.com body %s, want max_completion_tokens only", b)
	}
	if b := string(reqs[1].Body); !strings.Contains(b, `"max_tokens":99`) {
		t.Errorf("other server body %s, want max_tokens", b)
	}
}

// TestToolsEncodedOncePerSpecs: the tools of an agent's requests (the same specs every time)
// are sent the same from the cache, and other specs replace them.
func TestToolsEncodedOncePerSpecs(t *testing.T) {
	c, script := newClient(t)
	spec := func(name string) messages.ToolSpec {
		return messages.ToolSpec{Name: name, Description: "Does " + name + ".", Parameters: json.RawMessage(`{"type": "object"}`)}
	}
	agentTools := []messages.ToolSpec{spec("read"), spec("write")}
	for _, tools := range [][]messages.ToolSpec{agentTools, agentTools, {spec("exec")}, nil, agentTools} {
		if _, err := call(context.Background(), c, providers.Request{Model: "m", Tools: tools}); err != nil {
			t.Fatal(err)
		}
	}
	var got [][]string
	for _, r := range script.Requests() {
		var body struct {
			Tools []struct {
				Function struct{ Name, Description string }
			}
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("body %s: %v", r.Body, err)
		}
		var names []string
		for _, tl := range body.Tools {
			names = append(names, tl.Function.Name+": "+tl.Function.Description)
		}
		got = append(got, names)
	}
	rw := []string{"read: Does read.", "write: Does write."}
	want := [][]string{rw, rw, {"exec: Does exec."}, nil, rw}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools per request (-want +got):\n%s", diff)
	}
}
