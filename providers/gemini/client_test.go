package gemini_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini"
	"github.com/reefgw/reef/providers/gemini/geminitest"
)

const canary = "AIzaCANARY-0123456789abcdefghijklmnop"

// setup starts a fake playing replies and a client pointed at it. The idle timeout is long:
// only the idle tests (setupIdle) rely on it firing.
func setup(t *testing.T, replies ...fake.Reply) (*gemini.Client, *fake.Script, *geminitest.Server) {
	t.Helper()
	return setupIdle(t, 10*time.Second, replies...)
}

func setupIdle(t *testing.T, idle time.Duration, replies ...fake.Reply) (*gemini.Client, *fake.Script, *geminitest.Server) {
	t.Helper()
	script := fake.NewScript(replies...)
	srv := geminitest.NewServer(script, geminitest.WithAPIKey(canary))
	t.Cleanup(srv.Close)
	c := gemini.New(gemini.Config{BaseURL: srv.URL(), APIKey: canary, IdleTimeout: idle})
	return c, script, srv
}

// collect reads a stream to its end and returns its events and the terminal error (nil after
// a clean io.EOF).
func collect(t *testing.T, c providers.Provider, req providers.Request) ([]providers.Event, error) {
	t.Helper()
	s, err := c.Stream(context.Background(), req)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var evs []providers.Event
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// summarize concatenates the deltas and lists tool calls; it ignores how text was split.
func summarize(evs []providers.Event) (text, reasoning string, calls []messages.ToolCall, last providers.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case providers.EventText:
			text += ev.Text
		case providers.EventReasoning:
			reasoning += ev.Text
		case providers.EventToolCall:
			calls = append(calls, ev.ToolCall)
		}
	}
	if len(evs) > 0 {
		last = evs[len(evs)-1]
	}
	return
}

func userReq(text string) providers.Request {
	return providers.Request{Model: "gemini-fake", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: text}}}
}

// ignoreID drops generated tool call ids from comparisons.
var ignoreID = cmpopts.IgnoreFields(messages.ToolCall{}, "ID")

func TestStreamAnswers(t *testing.T) {
	calls := []messages.ToolCall{
		{Name: "read_file", Arguments: `{"limit":20,"path":"notes/todo.md"}`},
		{Name: "exec", Arguments: `{"cmd":"ls -la"}`},
	}
	tests := []struct {
		name      string
		reply     fake.Reply
		text      string
		reasoning string
		calls     []messages.ToolCall
		stop      providers.StopReason
	}{
		{"text", fake.Reply{Text: "Hello there, how can I help you today? ✨"}, "Hello there, how can I help you today? ✨", "", nil, providers.StopEnd},
		{"reasoning", fake.Reply{Reasoning: "The user greets me politely.", Text: "Hi!"}, "Hi!", "The user greets me politely.", nil, providers.StopEnd},
		{"tool calls", fake.Reply{Text: "Let me look.", ToolCalls: calls}, "Let me look.", "", calls, providers.StopToolUse},
		{"no arguments", fake.Reply{ToolCalls: []messages.ToolCall{{Name: "now"}}}, "", "",
			[]messages.ToolCall{{Name: "now", Arguments: "{}"}}, providers.StopToolUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := setup(t, tt.reply)
			evs, err := collect(t, c, userReq("hi"))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			text, reasoning, got, last := summarize(evs)
			if text != tt.text || reasoning != tt.reasoning {
				t.Errorf("got text %q reasoning %q, want %q %q", text, reasoning, tt.text, tt.reasoning)
			}
			if diff := cmp.Diff(tt.calls, got, ignoreID); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if last.Kind != providers.EventDone || last.StopReason != tt.stop {
				t.Errorf("got last event %+v, want EventDone %q", last, tt.stop)
			}
		})
	}
}

func TestToolCallIDsAreUnique(t *testing.T) {
	two := fake.Reply{ToolCalls: []messages.ToolCall{{Name: "a", Arguments: "{}"}, {Name: "b", Arguments: "{}"}}}
	c, _, _ := setup(t, two, two)
	seen := map[string]bool{}
	for range 2 {
		evs, err := collect(t, c, userReq("go"))
		if err != nil {
			t.Fatal(err)
		}
		_, _, calls, _ := summarize(evs)
		for _, tc := range calls {
			if !strings.HasPrefix(tc.ID, "call_") || seen[tc.ID] {
				t.Errorf("got id %q, want a fresh call_ id", tc.ID)
			}
			seen[tc.ID] = true
		}
	}
	if len(seen) != 4 {
		t.Errorf("got %d distinct ids, want 4", len(seen))
	}
}

func TestStreamUsage(t *testing.T) {
	want := messages.Usage{InputTokens: 1200, OutputTokens: 42, CacheReadTokens: 1000}
	c, _, _ := setup(t, fake.Reply{Text: "ok", Usage: want})
	evs, err := collect(t, c, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var got *messages.Usage
	for _, ev := range evs {
		if ev.Kind == providers.EventUsage {
			got = &ev.Usage
		}
	}
	if got == nil {
		t.Fatal("no EventUsage")
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name       string
		reply      fake.Reply
		want       error
		retryAfter time.Duration
	}{
		{"429 with retryDelay", fake.Reply{Status: 429, RetryAfter: 12 * time.Second}, providers.ErrRateLimited, 12 * time.Second},
		{"503 unavailable", fake.Reply{Status: 503}, providers.ErrOverloaded, 0},
		{"529", fake.Reply{Status: 529}, providers.ErrOverloaded, 0},
		{"500", fake.Reply{Status: 500}, providers.ErrServer, 0},
		{"403", fake.Reply{Status: 403}, providers.ErrAuth, 0},
		{"400", fake.Reply{Status: 400}, providers.ErrBadRequest, 0},
		{"overflow", fake.Reply{Overflow: true}, providers.ErrContextOverflow, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := setup(t, tt.reply)
			_, err := c.Stream(context.Background(), userReq("hi"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var ae *providers.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("got %T, want *providers.APIError", err)
			}
			if ae.RetryAfter != tt.retryAfter {
				t.Errorf("got RetryAfter %v, want %v", ae.RetryAfter, tt.retryAfter)
			}
			if ae.Provider != "gemini" {
				t.Errorf("got provider %q, want gemini", ae.Provider)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestStreamFaultsMidStream(t *testing.T) {
	call := messages.ToolCall{Name: "write_file", Arguments: `{"path":"a.txt"}`}
	tests := []struct {
		name  string
		reply fake.Reply
		want  error
	}{
		{"hang", fake.Reply{Hang: true}, providers.ErrIdleTimeout},
		{"no headers", fake.Reply{Delay: time.Hour}, providers.ErrIdleTimeout},
		{"cut before the tool call", fake.Reply{Text: "Writing the file now.", ToolCalls: []messages.ToolCall{call}, CutInTool: true}, providers.ErrStreamCut},
		{"cut in text", fake.Reply{Text: "a long answer that will be cut", CutInText: true}, providers.ErrStreamCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idle := 10 * time.Second
			if tt.want == providers.ErrIdleTimeout {
				idle = 200 * time.Millisecond
			}
			c, _, _ := setupIdle(t, idle, tt.reply)
			evs, err := collect(t, c, userReq("hi"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if !providers.Retryable(err) {
				t.Errorf("got Retryable(%v) false, want true", err)
			}
			for _, ev := range evs {
				if ev.Kind == providers.EventToolCall || ev.Kind == providers.EventDone {
					t.Errorf("got %+v before the cut, want no tool call and no done", ev)
				}
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestStreamDelayHonoursCancel(t *testing.T) {
	c, _, _ := setup(t, fake.Reply{Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Stream(ctx, userReq("hi"))
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestKeyInHeaderNeverInURL(t *testing.T) {
	c, script, srv := setup(t, fake.Reply{Text: "ok"})
	if _, err := collect(t, c, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("ping: %v", err)
	}
	reqs := script.Requests()
	if len(reqs) != 1 || reqs[0].Model != "gemini-fake" {
		t.Fatalf("got requests %+v, want one for gemini-fake", reqs)
	}
	if k := reqs[0].Header["X-Goog-Api-Key"]; len(k) != 1 || k[0] != canary {
		t.Errorf("got x-goog-api-key %q, want the key", k)
	}
	if strings.Contains(string(reqs[0].Body), canary) {
		t.Error("request body contains the API key")
	}
	uris := srv.RequestURIs()
	want := []string{"/v1beta/models/gemini-fake:streamGenerateContent?alt=sse", "/v1beta/models?pageSize=1000"}
	if diff := cmp.Diff(want, uris); diff != "" {
		t.Errorf("request URIs (-want +got):\n%s", diff)
	}
}

func TestAuthErrors(t *testing.T) {
	tests := []struct {
		name string
		key  string
	}{
		{"missing key", ""},
		{"wrong key", canary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.NewServer(fake.NewScript(), geminitest.WithAPIKey("the-right-key"))
			defer srv.Close()
			c := gemini.New(gemini.Config{BaseURL: srv.URL() + "/v1beta", APIKey: tt.key})
			_, err := c.Stream(context.Background(), userReq("hi"))
			if !errors.Is(err, providers.ErrAuth) {
				t.Fatalf("got %v, want ErrAuth", err)
			}
			if err := c.Ping(context.Background()); !errors.Is(err, providers.ErrAuth) {
				t.Errorf("ping: got %v, want ErrAuth", err)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := geminitest.NewServer(fake.NewScript())
	url := srv.URL()
	srv.Close()
	c := gemini.New(gemini.Config{BaseURL: url, APIKey: canary, HTTPClient: &http.Client{}})
	_, err := c.Stream(context.Background(), userReq("hi"))
	if !providers.Retryable(err) {
		t.Fatalf("got %v, want a retryable error", err)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("error %q contains the API key", err)
	}
}
