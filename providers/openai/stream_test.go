package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/openai"
)

// TestStreamWireVariants feeds raw bodies in the shapes compatible servers send.
func TestStreamWireVariants(t *testing.T) {
	tc := func(idx int, id, name, args string) string {
		return `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + string(rune('0'+idx)) +
			`,"id":"` + id + `","function":{"name":"` + name + `","arguments":` + args + `}}]}}]}` + "\n\n"
	}
	finish := func(r string) string {
		return `data: {"choices":[{"index":0,"delta":{},"finish_reason":"` + r + `"}]}` + "\n\n"
	}
	text := func(s string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}` + "\n\n"
	}
	const done = "data: [DONE]\n\n"
	tests := []struct {
		name    string
		body    string
		want    answer
		wantErr error
	}{
		{"finish without [DONE]", text("hi") + finish("stop"),
			answer{Text: "hi", Stop: providers.StopEnd}, nil},
		{"[DONE] without finish, with a call", tc(0, "a", "f", `"{\"x\":"`) + tc(0, "", "", `"1}"`) + done,
			answer{Calls: []messages.ToolCall{{ID: "a", Name: "f", Arguments: `{"x":1}`}}, Stop: providers.StopToolUse}, nil},
		{"calls by index, interleaved", tc(1, "b", "g", `"{}"`) + tc(0, "a", "f", `"{\"k\""`) + tc(0, "", "", `":2}"`) + finish("tool_calls") + done,
			answer{Calls: []messages.ToolCall{{ID: "a", Name: "f", Arguments: `{"k":2}`}, {ID: "b", Name: "g", Arguments: `{}`}},
				Stop: providers.StopToolUse}, nil},
		{"calls without index, each whole", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{\"y\":2}"}}]}}]}` + "\n\n" + finish("tool_calls") + done,
			answer{Calls: []messages.ToolCall{{ID: "a", Name: "f", Arguments: `{}`}, {ID: "b", Name: "g", Arguments: `{"y":2}`}},
				Stop: providers.StopToolUse}, nil},
		{"name repeated in every delta", tc(0, "a", "read", `"{\"p\""`) + tc(0, "a", "read", `":1}"`) + finish("stop") + done,
			answer{Calls: []messages.ToolCall{{ID: "a", Name: "read", Arguments: `{"p":1}`}}, Stop: providers.StopToolUse}, nil},
		{"reasoning in both fields", `data: {"choices":[{"index":0,"delta":{"reasoning":"r","reasoning_content":"r"}}]}` + "\n\n" + finish("stop") + done,
			answer{Reasoning: "r", Stop: providers.StopEnd}, nil},
		{"length", text("trunc") + finish("length") + done, answer{Text: "trunc", Stop: providers.StopMaxToken}, nil},
		// A character's bytes cut across two chunks are joined (#33.16); an invalid byte is U+FFFD.
		{"invalid UTF-8 in a chunk", text("caf\xc3") + text("\xa9 ok \xff") + finish("stop") + done,
			answer{Text: "café ok \uFFFD", Stop: providers.StopEnd}, nil},
		{"content filter", finish("content_filter") + done, answer{Stop: providers.StopFiltered}, nil},
		{"keep-alive comments and reasoning field", ": ping\n\n" +
			`data: {"choices":[{"index":0,"delta":{"reasoning":"hmm"}}]}` + "\n\n" + text("ok") + finish("stop") + done,
			answer{Reasoning: "hmm", Text: "ok", Stop: providers.StopEnd}, nil},
		{"usage without cache details", text("x") + finish("stop") +
			`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}` + "\n\n" + done,
			answer{Text: "x", Usage: messages.Usage{InputTokens: 7, OutputTokens: 3}, Stop: providers.StopEnd}, nil},
		{"ends without finish", text("half") + tc(0, "a", "f", `"{\"x\""`),
			answer{Text: "half"}, providers.ErrStreamCut},
		{"error chunk mid-stream", text("a") + `data: {"error":{"message":"upstream overloaded","code":503}}` + "\n\n",
			answer{Text: "a"}, providers.ErrOverloaded},
		{"overflow chunk mid-stream", `data: {"error":{"message":"prompt is too long: context length exceeded"}}` + "\n\n",
			answer{}, providers.ErrContextOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			got, err := call(context.Background(), openai.New(openai.Config{BaseURL: srv.URL}), providers.Request{})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorBodyShapes(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   error
		msg    string
	}{
		{"ollama string error", 404, `{"error":"model \"qwen9\" not found, try pulling it first"}`, providers.ErrBadRequest, `model "qwen9" not found`},
		{"vllm detail", 400, `{"detail":"This model's maximum context length is 4096 tokens"}`, providers.ErrContextOverflow, "maximum context length"},
		{"llama.cpp context size", 400, `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`,
			providers.ErrContextOverflow, "available context size"},
		{"unrelated 400", 400, `{"error":{"message":"Invalid value for tool_choice","type":"invalid_request_error","code":null}}`,
			providers.ErrBadRequest, "tool_choice"},
		{"plain text", 502, "Bad Gateway", providers.ErrServer, "Bad Gateway"},
		{"empty body", 503, "", providers.ErrOverloaded, "Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			_, err := openai.New(openai.Config{Name: "ollama", BaseURL: srv.URL}).Stream(context.Background(), providers.Request{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "ollama: ") {
				t.Errorf("err = %v, want %v mentioning %q, named ollama", err, tt.want, tt.msg)
			}
		})
	}
}
