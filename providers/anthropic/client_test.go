package anthropic_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/anthropic/anthropictest"
	"github.com/reefgw/reef/providers/fake"
)

const canary = "sk-ant-CANARY-0123456789abcdef"

// setup starts a fake playing replies and a client pointed at it. The idle timeout is long:
// only the idle tests (setupIdle) rely on it firing.
func setup(t *testing.T, replies ...fake.Reply) (*anthropic.Client, *fake.Script) {
	t.Helper()
	return setupIdle(t, 10*time.Second, replies...)
}

func setupIdle(t *testing.T, idle time.Duration, replies ...fake.Reply) (*anthropic.Client, *fake.Script) {
	t.Helper()
	script := fake.NewScript(replies...)
	srv := anthropictest.NewServer(script, anthropictest.WithAPIKey(canary))
	t.Cleanup(srv.Close)
	c := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: canary, IdleTimeout: idle})
	return c, script
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

// joined concatenates text deltas of kind and lists tool calls; it ignores how text was split.
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
	return providers.Request{Model: "claude-fake", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: text}}}
}

func TestStreamAnswers(t *testing.T) {
	calls := []messages.ToolCall{
		{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"notes/todo.md","limit":20}`},
		{ID: "toolu_2", Name: "exec", Arguments: `{"cmd":"ls -la","timeout":5}`},
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
		{"reasoning", fake.Reply{Reasoning: "The user greets me.", Text: "Hi!"}, "Hi!", "The user greets me.", nil, providers.StopEnd},
		{"tool calls", fake.Reply{Text: "Let me look.", ToolCalls: calls}, "Let me look.", "", calls, providers.StopToolUse},
		{"empty arguments", fake.Reply{ToolCalls: []messages.ToolCall{{ID: "toolu_3", Name: "now"}}}, "", "",
			[]messages.ToolCall{{ID: "toolu_3", Name: "now", Arguments: "{}"}}, providers.StopToolUse},
		{"malformed arguments pass through", fake.Reply{ToolCalls: []messages.ToolCall{{ID: "toolu_4", Name: "exec", Arguments: `{"cmd": "ls"`}}}, "", "",
			[]messages.ToolCall{{ID: "toolu_4", Name: "exec", Arguments: `{"cmd": "ls"`}}, providers.StopToolUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, tt.reply)
			evs, err := collect(t, c, userReq("hi"))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			text, reasoning, got, last := summarize(evs)
			if text != tt.text || reasoning != tt.reasoning {
				t.Errorf("got text %q reasoning %q, want %q %q", text, reasoning, tt.text, tt.reasoning)
			}
			if diff := cmp.Diff(tt.calls, got); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if last.Kind != providers.EventDone || last.StopReason != tt.stop {
				t.Errorf("got last event %+v, want EventDone %q", last, tt.stop)
			}
		})
	}
}

func TestStreamTextArrivesInPieces(t *testing.T) {
	c, _ := setup(t, fake.Reply{Text: "one two three four five six"})
	evs, err := collect(t, c, userReq("count"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Kind == providers.EventText {
			n++
		}
	}
	if n < 2 {
		t.Errorf("got %d text events, want several deltas", n)
	}
}

func TestStreamUsage(t *testing.T) {
	want := messages.Usage{InputTokens: 1200, OutputTokens: 42, CacheReadTokens: 1000, CacheWriteTokens: 150}
	c, _ := setup(t, fake.Reply{Text: "ok", Usage: want})
	evs, err := collect(t, c, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var got messages.Usage
	seen := false
	for _, ev := range evs {
		if ev.Kind == providers.EventUsage {
			got, seen = ev.Usage, true
		}
	}
	if !seen {
		t.Fatal("no EventUsage")
	}
	if diff := cmp.Diff(want, got); diff != "" {
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
		{"429 with Retry-After", fake.Reply{Status: 429, RetryAfter: 7 * time.Second}, providers.ErrRateLimited, 7 * time.Second},
		{"529 overloaded", fake.Reply{Status: 529}, providers.ErrOverloaded, 0},
		{"500", fake.Reply{Status: 500}, providers.ErrServer, 0},
		{"401", fake.Reply{Status: 401}, providers.ErrAuth, 0},
		{"overflow", fake.Reply{Overflow: true}, providers.ErrContextOverflow, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := setup(t, tt.reply)
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
			if ae.Provider != "anthropic" {
				t.Errorf("got provider %q, want anthropic", ae.Provider)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestStreamFaultsMidStream(t *testing.T) {
	call := messages.ToolCall{ID: "toolu_9", Name: "write_file", Arguments: `{"path":"a.txt","content":"hello world, this is long"}`}
	tests := []struct {
		name  string
		reply fake.Reply
		want  error
	}{
		{"hang", fake.Reply{Hang: true}, providers.ErrIdleTimeout},
		{"no headers", fake.Reply{Delay: time.Hour}, providers.ErrIdleTimeout},
		{"cut in tool call", fake.Reply{Text: "Writing.", ToolCalls: []messages.ToolCall{call}, CutInTool: true}, providers.ErrStreamCut},
		{"cut in text", fake.Reply{Text: "a long answer that will be cut", CutInText: true}, providers.ErrStreamCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idle := 10 * time.Second
			if tt.want == providers.ErrIdleTimeout {
				idle = 200 * time.Millisecond
			}
			c, _ := setupIdle(t, idle, tt.reply)
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
	c, _ := setup(t, fake.Reply{Delay: time.Hour})
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

func TestWrongKeyIsAuthError(t *testing.T) {
	script := fake.NewScript()
	srv := anthropictest.NewServer(script, anthropictest.WithAPIKey("the-right-key"))
	defer srv.Close()
	c := anthropic.New(anthropic.Config{BaseURL: srv.URL() + "/v1/", APIKey: canary})
	_, err := c.Stream(context.Background(), userReq("hi"))
	if !errors.Is(err, providers.ErrAuth) {
		t.Fatalf("got %v, want ErrAuth", err)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("error %q contains the API key", err)
	}
	if err := c.Ping(context.Background()); !errors.Is(err, providers.ErrAuth) {
		t.Errorf("ping: got %v, want ErrAuth", err)
	}
}

func TestPing(t *testing.T) {
	c, _ := setup(t)
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := anthropictest.NewServer(fake.NewScript())
	url := srv.URL()
	srv.Close()
	c := anthropic.New(anthropic.Config{BaseURL: url, APIKey: canary, HTTPClient: &http.Client{}})
	_, err := c.Stream(context.Background(), userReq("hi"))
	if !providers.Retryable(err) {
		t.Fatalf("got %v, want a retryable error", err)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("error %q contains the API key", err)
	}
}
