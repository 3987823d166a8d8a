package openaiapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
)

// echoGateway stands in for the runtime: it runs the channel, records what is delivered and
// answers each message like a Session would (a reply, then the run's end with its usage).
type echoGateway struct {
	ch     *Channel
	mu     sync.Mutex
	got    []messages.Inbound
	refuse error // deliver fails with it
	hold   bool  // accept, never answer
	fail   bool  // answer as a failed run
}

func (g *echoGateway) deliver(ctx context.Context, in messages.Inbound) error {
	g.mu.Lock()
	if g.refuse != nil {
		defer g.mu.Unlock()
		return g.refuse
	}
	g.got = append(g.got, in)
	hold, fail := g.hold, g.fail
	g.mu.Unlock()
	if hold {
		return nil
	}
	go func() { // the Connector's send job, after the run
		out := messages.Outbound{Channel: Name, ChatID: in.ChatID, ReplyToID: in.MessageID, Text: "echo: " + in.Text, Failed: fail}
		if fail {
			out.Text = "Sorry, something went wrong while answering. Please try again."
		}
		_, _ = g.ch.Send(context.Background(), out)
		g.ch.Progress(context.Background(), messages.TurnEvent{Kind: messages.TurnFinal, ChatID: in.ChatID,
			Usage: messages.Usage{InputTokens: 7, OutputTokens: 3}})
	}()
	return nil
}

func (g *echoGateway) set(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
}

func (g *echoGateway) delivered() []messages.Inbound {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]messages.Inbound(nil), g.got...)
}

func newTestServer(t *testing.T, mutate func(*Config)) (*httptest.Server, *echoGateway) {
	t.Helper()
	ch := NewChannel(zerolog.Nop())
	g := &echoGateway{ch: ch}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = ch.Run(ctx, g.deliver); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	cfg := Config{Channel: ch, Agents: []Agent{{ID: "main", Name: "Reef"}, {ID: "work"}}, Log: zerolog.Nop()}
	if mutate != nil {
		mutate(&cfg)
	}
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return srv, g
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestModels(t *testing.T) {
	srv, _ := newTestServer(t, nil)
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Object string
		Data   []struct{ ID, Object, OwnedBy string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "reef/main" ||
		list.Data[1].ID != "reef/work" || list.Data[0].Object != "model" {
		t.Fatalf("GET /v1/models = %d %+v", resp.StatusCode, list)
	}
	for path, want := range map[string]int{"/v1/models/reef/work": 200, "/v1/models/reef/nope": 404, "/v1/nothing": 404} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s = %d %s, want %d JSON", path, resp.StatusCode, resp.Header.Get("Content-Type"), want)
		}
	}
}

func TestChatNonStream(t *testing.T) {
	srv, g := newTestServer(t, nil)
	resp, body := post(t, srv.URL, `{"model":"reef/work","user":"ann@example.com","messages":[
		{"role":"system","content":"be brief"},{"role":"user","content":"first"},
		{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"hello"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var c completion
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || c.Model != "reef/work" || len(c.Choices) != 1 || *c.Choices[0].Message.Content != "echo: hello" ||
		*c.Choices[0].FinishReason != "stop" || c.Usage == nil || *c.Usage != (usage{7, 3, 10}) {
		t.Fatalf("completion = %s", body)
	}
	if got, want := resp.Header.Get(SessionKeyHeader), "agent:work:openai:direct:ann@example.com"; got != want {
		t.Errorf("%s = %q, want %q", SessionKeyHeader, got, want)
	}
	in := g.delivered()
	if len(in) != 1 || in[0].Agent != "work" || in[0].SenderID != "ann@example.com" || in[0].Text != "hello" ||
		in[0].ChatType != messages.ChatDirect || in[0].MessageID == "" {
		t.Fatalf("delivered %+v", in)
	}
	want := messages.Media{Kind: messages.MediaImage, Name: "image-1.png", MIME: "image/png", Size: 8, Ref: "data:image/png;base64,iVBORw0KGgo="}
	if len(in[0].Media) != 1 || !reflect.DeepEqual(in[0].Media[0], want) {
		t.Errorf("the image part became %+v, want %+v", in[0].Media, want)
	}
}

func TestChatSessionHeader(t *testing.T) {
	srv, g := newTestServer(t, nil)
	body := `{"model":"reef/main","user":"ignored","messages":[{"role":"user","content":"hi"}]}`
	for _, h := range []string{"s1", "agent:main:openai:direct:s2"} {
		resp, b := post(t, srv.URL, body, map[string]string{SessionHeader: h})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", h, resp.StatusCode, b)
		}
	}
	resp, b := post(t, srv.URL, `{"model":"reef/main","messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	in := g.delivered()
	if len(in) != 3 || in[0].SenderID != "s1" || in[1].SenderID != "s2" || in[0].Stateless || in[1].Stateless {
		t.Fatalf("delivered %+v", in)
	}
	if !in[2].Stateless || in[2].SenderID != StatelessSender || resp.Header.Get(SessionKeyHeader) != "" {
		t.Fatalf("a request naming no session: delivered %+v, %s %q", in[2], SessionKeyHeader, resp.Header.Get(SessionKeyHeader))
	}
}

// A request naming no session is stateless: its messages before the last are the conversation
// it continues (the client's tool calls and results as the model's own), each request has a
// chat (and session) of its own, and one ending with tool results has them as its new turn.
func TestChatStateless(t *testing.T) {
	srv, g := newTestServer(t, nil)
	body := `{"model":"reef/main","messages":[
		{"role":"system","content":"Answer in French."},
		{"role":"user","content":"My name is Ann."},
		{"role":"assistant","content":"Bonjour Ann.","tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"found"},
		{"role":"user","content":[{"type":"text","text":"What is my name?"}]}]}`
	for range 2 {
		if resp, b := post(t, srv.URL, body, nil); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
	}
	in := g.delivered()
	if len(in) != 2 || in[0].ChatID == in[1].ChatID {
		t.Fatalf("two stateless requests share a chat: %+v", in)
	}
	want := []messages.ChatMessage{
		{Role: messages.RoleSystem, Content: "Answer in French."},
		{Role: messages.RoleUser, Content: "My name is Ann."},
		{Role: messages.RoleAssistant, Content: "Bonjour Ann.", ToolCalls: []messages.ToolCall{{ID: "c1", Name: "lookup", Arguments: "{}"}}},
		{Role: messages.RoleTool, Content: "found", ToolCallID: "c1", ToolName: "lookup"},
	}
	got := in[0]
	if !got.Stateless || got.Text != "What is my name?" || len(got.Context) != len(want) {
		t.Fatalf("delivered %+v", got)
	}
	for i := range want {
		if !reflect.DeepEqual(got.Context[i], want[i]) {
			t.Errorf("context[%d] = %+v, want %+v", i, got.Context[i], want[i])
		}
	}
	toolLast := `{"model":"reef/main","tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}],"messages":[
		{"role":"user","content":"look it up"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c8","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}},{"id":"c9","type":"function","function":{"name":"lookup","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c9","content":"42"}]}`
	if resp, b := post(t, srv.URL, toolLast, nil); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	last := g.delivered()[2]
	wantResults := []messages.ChatMessage{{Role: messages.RoleTool, ToolCallID: "c9", ToolName: "lookup", Content: "42"}}
	if last.Text != "" || len(last.Context) != 2 || !reflect.DeepEqual(last.ToolResults, wantResults) {
		t.Fatalf("a request ending with a tool result: delivered %+v", last)
	}
	wantTools := &messages.ClientTools{Specs: []messages.ToolSpec{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	if !reflect.DeepEqual(last.ClientTools, wantTools) {
		t.Errorf("client tools %+v, want %+v", last.ClientTools, wantTools)
	}
}

func TestChatBadInput(t *testing.T) {
	srv, g := newTestServer(t, func(c *Config) {
		c.MaxBody = 1 << 20
		c.HasTool = func(agent, name string) bool { return agent == "main" && name == "exec" }
	})
	ok := `{"role":"user","content":"hi"}`
	tool := func(name string) string {
		return `{"type":"function","function":{"name":"` + name + `","parameters":{"type":"object"}}}`
	}
	tests := []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   string
	}{
		{"malformed JSON", `{"model":"reef/main","messages":[`, nil, 400, "invalid_json"},
		{"not an object", `[1,2]`, nil, 400, "invalid_json"},
		{"20 MB body", `{"model":"reef/main","messages":[{"role":"user","content":"` + strings.Repeat("a", 20<<20) + `"}]}`, nil, 413, "request_too_large"},
		{"no model", `{"messages":[` + ok + `]}`, nil, 400, "missing_model"},
		{"unknown model", `{"model":"gpt-4o","messages":[` + ok + `]}`, nil, 404, "model_not_found"},
		{"agent id without reef/", `{"model":"main","messages":[` + ok + `]}`, nil, 404, "model_not_found"},
		{"missing messages", `{"model":"reef/main"}`, nil, 400, "missing_messages"},
		{"empty messages", `{"model":"reef/main","messages":[]}`, nil, 400, "missing_messages"},
		{"no user message", `{"model":"reef/main","messages":[{"role":"system","content":"x"}]}`, nil, 400, "missing_user_message"},
		{"empty user message", `{"model":"reef/main","messages":[{"role":"user","content":"  "}]}`, nil, 400, "empty_message"},
		{"bad content", `{"model":"reef/main","messages":[{"role":"user","content":42}]}`, nil, 400, "invalid_content"},
		{"message over the limit", `{"model":"reef/main","messages":[{"role":"user","content":"` + strings.Repeat("a", 40<<10) + `"}]}`, nil, 413, "message_too_long"},
		{"ends with the assistant", `{"model":"reef/main","messages":[` + ok + `,{"role":"assistant","content":"x"}]}`, nil, 400, "missing_user_message"},
		{"unknown role", `{"model":"reef/main","messages":[{"role":"robot","content":"x"},` + ok + `]}`, nil, 400, "invalid_content"},
		{"a tool result without its call id", `{"model":"reef/main","user":"ann","messages":[` + ok + `,{"role":"tool","content":"x"}]}`, nil, 400, "invalid_tool_message"},
		{"a stateless tool result for no call", `{"model":"reef/main","messages":[` + ok + `,{"role":"tool","tool_call_id":"c","content":"x"}]}`, nil, 400, "invalid_tool_message"},
		{"a client tool named like the agent's", `{"model":"reef/main","tools":[` + tool("lookup") + `,` + tool("exec") + `],"messages":[` + ok + `]}`, nil, 400, "tool_name_conflict"},
		{"a tool declared twice", `{"model":"reef/main","tools":[` + tool("lookup") + `,` + tool("lookup") + `],"messages":[` + ok + `]}`, nil, 400, "duplicate_tool"},
		{"a tool with a bad name", `{"model":"reef/main","tools":[` + tool("look up") + `],"messages":[` + ok + `]}`, nil, 400, "invalid_tool"},
		{"a tool not a function", `{"model":"reef/main","tools":[{"type":"web_search"}],"messages":[` + ok + `]}`, nil, 400, "unsupported_tool"},
		{"tool_choice of an undeclared tool", `{"model":"reef/main","tools":[` + tool("lookup") + `],"tool_choice":{"type":"function","function":{"name":"other"}},"messages":[` + ok + `]}`, nil, 400, "invalid_tool_choice"},
		{"tool_choice required without tools", `{"model":"reef/main","tool_choice":"required","messages":[` + ok + `]}`, nil, 400, "invalid_tool_choice"},
		{"tool_choice a word", `{"model":"reef/main","tools":[` + tool("lookup") + `],"tool_choice":"always","messages":[` + ok + `]}`, nil, 400, "invalid_tool_choice"},
		{"an ftp image", `{"model":"reef/main","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://h/x.png"}}]}]}`, nil, 400, "invalid_image_url"},
		{"a plain http image", `{"model":"reef/main","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://h/x.png"}}]}]}`, nil, 400, "invalid_image_url"},
		{"a data URL of text", `{"model":"reef/main","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:text/plain;base64,aGk="}}]}]}`, nil, 400, "invalid_image_url"},
		{"a data URL not base64", `{"model":"reef/main","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,%%%"}}]}]}`, nil, 400, "invalid_image_url"},
		{"no image_url", `{"model":"reef/main","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, nil, 400, "invalid_content"},
		{"11 images", `{"model":"reef/main","messages":[{"role":"user","content":[` + strings.Repeat(`{"type":"image_url","image_url":{"url":"https://h/x.png"}},`, 10) + `{"type":"image_url","image_url":{"url":"https://h/x.png"}}]}]}`, nil, 400, "too_many_images"},
		{"n 2", `{"model":"reef/main","n":2,"messages":[` + ok + `]}`, nil, 400, "unsupported_n"},
		{"json_object", `{"model":"reef/main","response_format":{"type":"json_object"},"messages":[` + ok + `]}`, nil, 400, "unsupported_response_format"},
		{"json_schema", `{"model":"reef/main","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}},"messages":[` + ok + `]}`, nil, 400, "unsupported_response_format"},
		{"response_format a string", `{"model":"reef/main","response_format":"json","messages":[` + ok + `]}`, nil, 400, "invalid_response_format"},
		{"max_tokens 0", `{"model":"reef/main","max_tokens":0,"messages":[` + ok + `]}`, nil, 400, "invalid_max_tokens"},
		{"max_completion_tokens -1", `{"model":"reef/main","max_completion_tokens":-1,"messages":[` + ok + `]}`, nil, 400, "invalid_max_tokens"},
		{"bad user", `{"model":"reef/main","user":"a b","messages":[` + ok + `]}`, nil, 400, "invalid_session"},
		{"bad header", `{"model":"reef/main","messages":[` + ok + `]}`, map[string]string{SessionHeader: "../x"}, 400, "invalid_session"},
		{"another channel's session", `{"model":"reef/main","messages":[` + ok + `]}`, map[string]string{SessionHeader: "agent:main:telegram:direct:42"}, 403, "session_not_allowed"},
		{"another agent's session", `{"model":"reef/main","messages":[` + ok + `]}`, map[string]string{SessionHeader: "agent:work:openai:direct:s"}, 403, "session_not_allowed"},
		{"a sub-agent", `{"model":"reef/main","messages":[` + ok + `]}`, map[string]string{SessionHeader: "agent:main:subagent:1234"}, 403, "session_not_allowed"},
		{"a key as user", `{"model":"reef/main","user":"agent:main:openai:direct:s","messages":[` + ok + `]}`, nil, 403, "session_not_allowed"},
	}
	for _, tt := range tests {
		resp, body := post(t, srv.URL, tt.body, tt.header)
		var e struct {
			Error struct{ Message, Type, Code string }
		}
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != tt.status || e.Error.Code != tt.code || e.Error.Message == "" {
			t.Errorf("%s: %d %s, want %d with code %s", tt.name, resp.StatusCode, body, tt.status, tt.code)
		}
	}
	resp, _ := post(t, srv.URL, "", nil)
	resp.Body.Close()
	get, err := http.Get(srv.URL + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != 405 || get.Header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/chat/completions = %d, want 405", get.StatusCode)
	}
	if in := g.delivered(); len(in) != 0 {
		t.Fatalf("bad requests delivered %d messages: %+v", len(in), in)
	}
}

// TestChatStream reads the stream as a strict client does (choices[0] of every chunk): the
// usage chunk, whose choices are empty, comes only when stream_options.include_usage asks
// for it (#33.11).
func TestChatStream(t *testing.T) {
	for name, tc := range map[string]struct {
		options   string
		wantUsage bool
	}{
		"without include_usage": {"", false},
		"include_usage false":   {`,"stream_options":{"include_usage":false}`, false},
		"include_usage true":    {`,"stream_options":{"include_usage":true}`, true},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := newTestServer(t, nil)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions",
				strings.NewReader(`{"model":"reef/main","stream":true`+tc.options+`,"messages":[{"role":"user","content":"hello"}]}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
			}
			text, finish, u, done := readStream(t, resp.Body, !tc.wantUsage)
			if !done || text != "echo: hello" || finish != "stop" {
				t.Fatalf("stream: done %v, text %q, finish %q", done, text, finish)
			}
			if tc.wantUsage != (u != nil) || (u != nil && u.TotalTokens != 10) {
				t.Errorf("usage %+v, want it: %v", u, tc.wantUsage)
			}
		})
	}
}

// readStream reads a streamed completion. strict fails on a chunk without choices[0], as a
// client that indexes it would.
func readStream(t *testing.T, body io.Reader, strict bool) (text, finish string, u *usage, done bool) {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return b.String(), finish, u, true
		}
		var c completion
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk object %q", c.Object)
		}
		if strict && len(c.Choices) == 0 {
			t.Fatalf("chunk %s has no choices[0]: a client that did not ask for usage reads it", data)
		}
		if c.Usage != nil {
			u = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Delta != nil && ch.Delta.Content != nil {
				b.WriteString(*ch.Delta.Content)
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	return b.String(), finish, u, false
}

func TestChatFailedRun(t *testing.T) {
	srv, g := newTestServer(t, nil)
	g.set(func() { g.fail = true })
	resp, body := post(t, srv.URL, `{"model":"reef/main","messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp.StatusCode != 502 || !strings.Contains(string(body), "run_failed") || !strings.Contains(string(body), "something went wrong") {
		t.Fatalf("failed run: %d %s", resp.StatusCode, body)
	}
}

func TestChatNotAccepted(t *testing.T) {
	srv, g := newTestServer(t, nil)
	g.set(func() { g.refuse = errors.New("disk full") })
	resp, body := post(t, srv.URL, `{"model":"reef/main","messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp.StatusCode != 503 || strings.Contains(string(body), "disk full") {
		t.Fatalf("refused message: %d %s", resp.StatusCode, body)
	}
	g.set(func() { g.refuse = nil })
	resp, body = post(t, srv.URL, `{"model":"reef/main","messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("after a refusal the session is free again: %d %s", resp.StatusCode, body)
	}
}

func TestChatNotRunning(t *testing.T) {
	srv := httptest.NewServer(New(Config{Channel: NewChannel(zerolog.Nop()), Agents: []Agent{{ID: "main"}},
		Timeout: 200 * time.Millisecond}))
	defer srv.Close()
	resp, body := post(t, srv.URL, `{"model":"reef/main","messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp.StatusCode != 503 {
		t.Fatalf("channel not running: %d %s", resp.StatusCode, body)
	}
}

// A request that times out keeps its session until its run ends: the next request of the
// session waits instead of taking the late answer for its own.
func TestChatTimeoutHoldsSession(t *testing.T) {
	srv, g := newTestServer(t, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	g.set(func() { g.hold = true })
	body := `{"model":"reef/main","user":"u","messages":[{"role":"user","content":"slow"}]}`
	resp, b := post(t, srv.URL, body, nil)
	if resp.StatusCode != 504 || !strings.Contains(string(b), "timeout") {
		t.Fatalf("held run: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, srv.URL, body, nil)
	if resp.StatusCode != 429 || !strings.Contains(string(b), "session_busy") {
		t.Fatalf("second request while the first run goes on: %d %s", resp.StatusCode, b)
	}
	other := `{"model":"reef/main","user":"v","messages":[{"role":"user","content":"x"}]}`
	g.mu.Lock()
	g.hold = false
	first := g.got[0]
	g.mu.Unlock()
	// The requests that are answered go through a handler with the default timeout on the
	// same channel, so that a loaded machine cannot make them time out.
	patient := httptest.NewServer(New(Config{Channel: g.ch, Agents: []Agent{{ID: "main"}}}))
	defer patient.Close()
	if resp, b := post(t, patient.URL, other, nil); resp.StatusCode != 200 {
		t.Fatalf("another session is not held: %d %s", resp.StatusCode, b)
	}
	// The first run ends late: its answer has nobody waiting, and the session is free.
	_, _ = g.ch.Send(context.Background(), messages.Outbound{ChatID: first.ChatID, Text: "late"})
	g.ch.Progress(context.Background(), messages.TurnEvent{Kind: messages.TurnFinal, ChatID: first.ChatID})
	resp, b = post(t, patient.URL, body, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "echo: slow") || strings.Contains(string(b), "late") {
		t.Fatalf("after the late end: %d %s", resp.StatusCode, b)
	}
}
