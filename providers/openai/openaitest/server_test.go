package openaitest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// post sends a raw chat request and returns the data lines of the answer.
func post(t *testing.T, url, body string) (*http.Response, []string) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	return resp, data
}

func TestWireFormat(t *testing.T) {
	script := fake.NewScript(fake.Reply{
		Text:      "Let me check.",
		ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"some/long/path.txt"}`}},
		Usage:     messages.Usage{InputTokens: 10, OutputTokens: 4, CacheReadTokens: 6},
	})
	srv := openaitest.NewServer(script)
	defer srv.Close()
	if !strings.HasSuffix(srv.URL(), "/v1") || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q, want http://127.0.0.1:port/v1", srv.URL())
	}
	resp, data := post(t, srv.URL(), `{"model":"m","stream":true,"messages":[{"role":"system","content":"sys"},`+
		`{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"type":"function","function":{"name":"read"}}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if len(data) == 0 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("data lines %q, want them to end with [DONE]", data)
	}
	argPieces, usage, finish := 0, false, ""
	for _, d := range data[:len(data)-1] {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Function struct{ Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %q: %v", d, err)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Arguments != "" {
					argPieces++
				}
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
		if c.Usage != nil && c.Usage.PromptTokens == 16 {
			usage = true
		}
	}
	if argPieces < 2 || !usage || finish != "tool_calls" {
		t.Errorf("argument pieces %d (want ≥2), usage chunk %v, finish %q", argPieces, usage, finish)
	}
	reqs := script.Requests()
	if len(reqs) != 1 || reqs[0].System != "sys" || reqs[0].Messages[0].Content != "hi" ||
		len(reqs[0].Tools) != 1 || len(reqs[0].Body) == 0 || reqs[0].Header["Content-Type"] == nil {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestStatusAndModels(t *testing.T) {
	srv := openaitest.NewServer(fake.NewScript(fake.Reply{Status: 429, RetryAfter: 1500 * time.Millisecond}))
	defer srv.Close()
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Retry-After-Ms") != "1500" ||
		!strings.Contains(string(body), `"error"`) {
		t.Errorf("status %d, headers %v, body %s", resp.StatusCode, resp.Header, body)
	}
	resp, err = http.Get(srv.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /models: %d", resp.StatusCode)
	}
}

func TestCloseReleasesHangingRequests(t *testing.T) {
	srv := openaitest.NewServer(fake.NewScript(fake.Reply{Hang: true}))
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	srv.Close() // must not block on the hanging handler
}
