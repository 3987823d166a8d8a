package anthropictest_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/anthropic/anthropictest"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/internal/imagefit/imagefittest"
)

const reqBody = `{"model":"claude-x","max_tokens":100,"stream":true,"system":[{"type":"text","text":"S1"},{"type":"text","text":"S2"}],
	"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"exec","input_schema":{"type":"object"}}]}`

func post(t *testing.T, srv *anthropictest.Server, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/messages", strings.NewReader(reqBody))
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestWireFormat reads the raw SSE stream and checks the event sequence and payloads.
func TestWireFormat(t *testing.T) {
	script := fake.NewScript(fake.Reply{
		Reasoning: "think", Text: "Hello world",
		ToolCalls: []messages.ToolCall{{ID: "toolu_a", Name: "exec", Arguments: `{"cmd":"ls -la /tmp"}`}},
	})
	srv := anthropictest.NewServer(script)
	defer srv.Close()
	resp := post(t, srv, "")
	if ct := resp.Header.Get("content-type"); ct != "text/event-stream" {
		t.Errorf("got content-type %q", ct)
	}
	var names []string
	var args, text string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			if len(names) == 0 || names[len(names)-1] != name {
				names = append(names, name)
			}
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var ev struct {
				Delta struct {
					Text        string `json:"text"`
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			if err := json.Unmarshal([]byte(d), &ev); err != nil {
				t.Fatalf("data %q: %v", d, err)
			}
			args += ev.Delta.PartialJSON
			text += ev.Delta.Text
		}
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop", // thinking
		"content_block_start", "content_block_delta", "content_block_stop", // text
		"content_block_start", "content_block_delta", "content_block_stop", // tool_use
		"message_delta", "message_stop"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("event sequence (-want +got):\n%s", diff)
	}
	if args != `{"cmd":"ls -la /tmp"}` || text != "Hello world" {
		t.Errorf("got args %q text %q", args, text)
	}
	got := script.Requests()[0]
	if got.Model != "claude-x" || got.System != "S1S2" || !cmp.Equal(got.Tools, []string{"exec"}) ||
		len(got.Messages) != 1 || got.Messages[0].Content != "hi" {
		t.Errorf("recorded %+v", got)
	}
}

func TestAuthAndModels(t *testing.T) {
	srv := anthropictest.NewServer(fake.NewScript(), anthropictest.WithAPIKey("k1"))
	defer srv.Close()
	if resp := post(t, srv, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without key: got %d, want 401", resp.StatusCode)
	} else if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), `"authentication_error"`) {
		t.Errorf("got body %s, want an authentication_error", b)
	}
	if resp := post(t, srv, "k1"); resp.StatusCode != http.StatusOK {
		t.Errorf("with key: got %d, want 200", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/v1/models", nil)
	req.Header.Set("x-api-key", "k1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("models: got %d, want 200", resp.StatusCode)
	}
}

// TestCloseReleasesHang checks that Close returns while a request hangs.
func TestCloseReleasesHang(t *testing.T) {
	srv := anthropictest.NewServer(fake.NewScript(fake.Reply{Hang: true}))
	resp := post(t, srv, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d, want 200 then silence", resp.StatusCode)
	}
	srv.Close() // must not block on the hung handler
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("got a clean end of body, want the connection cut")
	}
}

// TestRefusesImagesAsTheAPIDoes: an image whose base64 is over 5 MB, or with a side over
// 8000 px, gets the API's 400 invalid_request_error, before any reply is used.
func TestRefusesImagesAsTheAPIDoes(t *testing.T) {
	script := fake.NewScript(fake.Reply{Text: "unused"})
	srv := anthropictest.NewServer(script)
	defer srv.Close()
	wide := imagefittest.PNG(8001, 2)
	for name, tc := range map[string]struct{ data, want string }{
		"base64 over 5 MB": {strings.Repeat("A", 5<<20+4), "image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes"},
		"side over 8000":   {base64.StdEncoding.EncodeToString(wide), "At least one of the image dimensions exceed max allowed size: 8000 pixels"},
	} {
		t.Run(name, func(t *testing.T) {
			body := `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":[` +
				`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + tc.data + `"}},{"type":"text","text":"hi"}]}]}`
			resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(string(b), `"invalid_request_error"`) || !strings.Contains(string(b), tc.want) {
				t.Errorf("got %d %s, want 400 invalid_request_error %q", resp.StatusCode, b, tc.want)
			}
		})
	}
	if n := len(script.Requests()); n != 0 {
		t.Errorf("recorded %d requests, want none", n)
	}
}
