package fake_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

// answer is what a stream produced, folded.
type answer struct {
	Text, Reasoning string
	TextDeltas      int
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
			a.TextDeltas++
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

func TestProviderPlaysReplies(t *testing.T) {
	calls := []messages.ToolCall{
		{ID: "c1", Name: "read", Arguments: `{"path":"a.txt"}`},
		{ID: "c2", Name: "exec", Arguments: `{"cmd":`}, // malformed stays malformed
	}
	usage := messages.Usage{InputTokens: 10, OutputTokens: 5}
	tests := []struct {
		name  string
		reply fake.Reply
		want  answer
	}{
		{"text", fake.Reply{Text: "Hello there, world!", Usage: usage},
			answer{Text: "Hello there, world!", TextDeltas: 3, Usage: usage, Stop: providers.StopEnd}},
		{"short text", fake.Reply{Text: "ok"},
			answer{Text: "ok", TextDeltas: 1, Stop: providers.StopEnd}},
		{"multibyte text", fake.Reply{Text: "héllo wörld ✓ ✓"},
			answer{Text: "héllo wörld ✓ ✓", TextDeltas: 3, Stop: providers.StopEnd}},
		{"reasoning and tools", fake.Reply{Reasoning: "think", Text: "Let me look.", ToolCalls: calls},
			answer{Reasoning: "think", Text: "Let me look.", TextDeltas: 3, Calls: calls, Stop: providers.StopToolUse}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := fake.New(fake.NewScript(tt.reply))
			s, err := p.Stream(context.Background(), providers.Request{Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := drain(s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProviderRecordsRequests(t *testing.T) {
	script := fake.NewScript()
	p := fake.New(script)
	req := providers.Request{
		Model:    "gpt-x",
		System:   "You are reef.",
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}},
		Tools:    []messages.ToolSpec{{Name: "read"}, {Name: "write"}},
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(s)
	if err != nil || got.Text != "ok" {
		t.Fatalf("empty script: got %q, %v; want the default \"ok\"", got.Text, err)
	}
	want := []fake.Request{{
		Model: "gpt-x", System: "You are reef.",
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}},
		Tools:    []string{"read", "write"},
	}}
	if diff := cmp.Diff(want, script.Requests()); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestProviderFaults(t *testing.T) {
	tests := []struct {
		name       string
		reply      fake.Reply
		want       error
		retryAfter time.Duration
	}{
		{"429", fake.Reply{Status: 429, RetryAfter: 2 * time.Second}, providers.ErrRateLimited, 2 * time.Second},
		{"500", fake.Reply{Status: 500}, providers.ErrServer, 0},
		{"529", fake.Reply{Status: 529}, providers.ErrOverloaded, 0},
		{"401", fake.Reply{Status: 401}, providers.ErrAuth, 0},
		{"overflow", fake.Reply{Overflow: true}, providers.ErrContextOverflow, 0},
		{"hang", fake.Reply{Hang: true}, context.DeadlineExceeded, 0},
		{"delay", fake.Reply{Delay: time.Hour}, context.DeadlineExceeded, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			s, err := fake.New(fake.NewScript(tt.reply)).Stream(ctx, providers.Request{})
			if s != nil || !errors.Is(err, tt.want) {
				t.Fatalf("got %v, %v; want nil stream and %v", s, err, tt.want)
			}
			var apiErr *providers.APIError
			if errors.As(err, &apiErr) && apiErr.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", apiErr.RetryAfter, tt.retryAfter)
			}
		})
	}
}

func TestProviderCuts(t *testing.T) {
	call := messages.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}
	tests := []struct {
		name     string
		reply    fake.Reply
		wantText string
	}{
		{"in text", fake.Reply{Text: "abcdefghij", CutInText: true}, "abcde"},
		{"in tool", fake.Reply{Text: "looking", ToolCalls: []messages.ToolCall{call}, CutInTool: true}, "looking"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fake.New(fake.NewScript(tt.reply)).Stream(context.Background(), providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := drain(s)
			if !errors.Is(err, providers.ErrStreamCut) {
				t.Fatalf("err = %v, want ErrStreamCut", err)
			}
			if got.Text != tt.wantText || len(got.Calls) != 0 || got.Stop != "" {
				t.Errorf("got %+v; want text %q, no call, no stop", got, tt.wantText)
			}
			if _, err := s.Next(); !errors.Is(err, providers.ErrStreamCut) {
				t.Errorf("Next after the cut = %v, want ErrStreamCut again", err)
			}
		})
	}
}

func TestScriptKeepRequests(t *testing.T) {
	script := fake.NewScript()
	script.KeepRequests = 3
	p := fake.New(script)
	for i := range 10 {
		s, err := p.Stream(context.Background(), providers.Request{Model: strings.Repeat("m", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	var got []string
	for _, r := range script.Requests() {
		got = append(got, r.Model)
	}
	if want := []string{"mmmmmmmm", "mmmmmmmmm", "mmmmmmmmmm"}; !cmp.Equal(got, want) {
		t.Errorf("kept %q, want the last three %q", got, want)
	}
}

func TestProviderCancelledStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := fake.New(fake.NewScript(fake.Reply{Text: strings.Repeat("x", 100)})).Stream(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel = %v, want context.Canceled", err)
	}
}

func BenchmarkFakeProvider(b *testing.B) {
	script := fake.NewScript()
	script.KeepRequests = 16
	script.Respond = func(fake.Request) fake.Reply {
		return fake.Reply{Text: "Sure, here is the answer you asked for.", Usage: messages.Usage{InputTokens: 100, OutputTokens: 10}}
	}
	p := fake.New(script)
	req := providers.Request{Model: "fake", System: "You are reef.",
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hello"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Stream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := drain(s); err != nil {
			b.Fatal(err)
		}
	}
}
