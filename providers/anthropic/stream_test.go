package anthropic_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
)

// rawServer answers /v1/messages with a fixed SSE body, for wire cases the fake does not script.
func rawServer(t *testing.T, sseBody string) *anthropic.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, sseBody)
	}))
	t.Cleanup(srv.Close)
	return anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: canary})
}

func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const (
	evStart = `{"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":1}}}`
	evStop  = `{"type":"message_stop"}`
)

func TestStopReasons(t *testing.T) {
	tests := []struct {
		wire string
		want providers.StopReason
	}{
		{"end_turn", providers.StopEnd},
		{"stop_sequence", providers.StopEnd},
		{"tool_use", providers.StopToolUse},
		{"max_tokens", providers.StopMaxToken},
		{"refusal", providers.StopFiltered},
	}
	for _, tt := range tests {
		t.Run(tt.wire, func(t *testing.T) {
			c := rawServer(t, ev("message_start", evStart)+
				ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+tt.wire+`"},"usage":{"output_tokens":3}}`)+
				ev("message_stop", evStop))
			evs, err := collect(t, c, userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			_, _, _, last := summarize(evs)
			if last.Kind != providers.EventDone || last.StopReason != tt.want {
				t.Errorf("got %+v, want done %q", last, tt.want)
			}
		})
	}
}

func TestStreamWireEdges(t *testing.T) {
	text := ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("ping", `{"type":"ping"}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`) +
		": keep-alive comment\n\n" +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	tool := ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_x","name":"exec","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":"}}`)
	tests := []struct {
		name     string
		body     string
		want     error
		wantText string
	}{
		{"ping and comments ignored", ev("message_start", evStart) + text + ev("future_event", `{"type":"future_event"}`) + ev("message_stop", evStop), nil, "Hello"},
		{"overloaded mid-stream", ev("message_start", evStart) + text +
			ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), providers.ErrOverloaded, "Hello"},
		{"clean EOF without message_stop", ev("message_start", evStart) + text, providers.ErrStreamCut, "Hello"},
		{"EOF inside a tool call", ev("message_start", evStart) + text + tool, providers.ErrStreamCut, "Hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := collect(t, rawServer(t, tt.body), userReq("hi"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			txt, _, calls, _ := summarize(evs)
			if txt != tt.wantText || len(calls) != 0 {
				t.Errorf("got text %q calls %v, want %q and no calls", txt, calls, tt.wantText)
			}
			if err != nil && strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestNextAfterEndKeepsReturningEOF(t *testing.T) {
	c := rawServer(t, ev("message_start", evStart)+ev("message_stop", evStop))
	s, err := c.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var kinds []providers.EventKind
	for range 4 {
		ev, err := s.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("got %v, want io.EOF", err)
			}
			continue
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == providers.EventUsage && ev.Usage.InputTokens != 5 {
			t.Errorf("got input tokens %d, want 5", ev.Usage.InputTokens)
		}
	}
	if len(kinds) != 2 || kinds[0] != providers.EventUsage || kinds[1] != providers.EventDone {
		t.Errorf("got kinds %v, want usage then done, then io.EOF", kinds)
	}
}

func TestToolInputGivenWhole(t *testing.T) {
	// Some Anthropic-compatible servers send the whole input in content_block_start.
	body := ev("message_start", evStart) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_w","name":"exec","input":{"cmd":"ls"}}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_s","name":"exec","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":"}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"pwd\"}"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`) +
		ev("message_stop", evStop)
	evs, err := collect(t, rawServer(t, body), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, calls, last := summarize(evs)
	want := []messages.ToolCall{
		{ID: "toolu_w", Name: "exec", Arguments: `{"cmd":"ls"}`},
		{ID: "toolu_s", Name: "exec", Arguments: `{"cmd":"pwd"}`},
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if last.StopReason != providers.StopToolUse {
		t.Errorf("got stop %q, want tool_use", last.StopReason)
	}
}

func TestUsageFromWire(t *testing.T) {
	c := rawServer(t, ev("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":1}}}`)+
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}`)+
		ev("message_stop", evStop))
	evs, err := collect(t, c, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := messages.Usage{InputTokens: 10, OutputTokens: 7, CacheReadTokens: 100, CacheWriteTokens: 20}
	if diff := cmp.Diff(want, evs[0].Usage); evs[0].Kind != providers.EventUsage || diff != "" {
		t.Errorf("got %+v, want usage (-want +got):\n%s", evs[0], diff)
	}
}
