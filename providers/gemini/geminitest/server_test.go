package geminitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini/geminitest"
)

const reqBody = `{"systemInstruction":{"parts":[{"text":"S"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}],
	"tools":[{"functionDeclarations":[{"name":"exec"}]}]}`

func post(t *testing.T, srv *geminitest.Server, path, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+path, strings.NewReader(reqBody))
	if key != "" {
		req.Header.Set("x-goog-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const streamPath = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"

// TestWireFormat reads the raw chunks: CRLF framing, text over several chunks, the function
// calls and finishReason in the last one.
func TestWireFormat(t *testing.T) {
	script := fake.NewScript(fake.Reply{
		Text:      "Hello world, how are you",
		ToolCalls: []messages.ToolCall{{Name: "exec", Arguments: `{"cmd":"ls"}`}},
	})
	srv := geminitest.NewServer(script)
	defer srv.Close()
	raw, err := io.ReadAll(post(t, srv, streamPath, "").Body)
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(strings.TrimSuffix(string(raw), "\r\n\r\n"), "\r\n\r\n")
	if len(events) < 3 {
		t.Fatalf("got %d chunks, want text over several chunks then a final one:\n%s", len(events), raw)
	}
	var text string
	var finish []string
	var calls []string
	for _, e := range events {
		var c struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text         string          `json:"text"`
						FunctionCall json.RawMessage `json:"functionCall"`
					} `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(e, "data: ")), &c); err != nil {
			t.Fatalf("chunk %q: %v", e, err)
		}
		for _, p := range c.Candidates[0].Content.Parts {
			text += p.Text
			if p.FunctionCall != nil {
				calls = append(calls, string(p.FunctionCall))
			}
		}
		finish = append(finish, c.Candidates[0].FinishReason)
	}
	if text != "Hello world, how are you" {
		t.Errorf("got text %q", text)
	}
	if diff := cmp.Diff([]string{`{"args":{"cmd":"ls"},"name":"exec"}`}, calls); diff != "" {
		t.Errorf("function calls (-want +got):\n%s", diff)
	}
	if finish[len(finish)-1] != "STOP" || finish[0] != "" {
		t.Errorf("got finish reasons %q, want STOP only at the end", finish)
	}
	got := script.Requests()[0]
	if got.Model != "gemini-x" || got.System != "S" || !cmp.Equal(got.Tools, []string{"exec"}) {
		t.Errorf("recorded %+v", got)
	}
}

func TestAuthAndRoutes(t *testing.T) {
	srv := geminitest.NewServer(fake.NewScript(), geminitest.WithAPIKey("k1"))
	defer srv.Close()
	tests := []struct {
		name, path, key string
		status          int
	}{
		{"missing key", streamPath, "", http.StatusForbidden},
		{"wrong key", streamPath, "k2", http.StatusBadRequest},
		{"right key", streamPath, "k1", http.StatusOK},
		{"not sse", "/v1beta/models/gemini-x:streamGenerateContent", "k1", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if resp := post(t, srv, tt.path, tt.key); resp.StatusCode != tt.status {
				t.Errorf("got %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/v1beta/models", nil)
	req.Header.Set("x-goog-api-key", "k1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("models: got %d, want 200", resp.StatusCode)
	}
}

func TestCloseReleasesHang(t *testing.T) {
	srv := geminitest.NewServer(fake.NewScript(fake.Reply{Hang: true}))
	resp := post(t, srv, streamPath, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d, want 200 then silence", resp.StatusCode)
	}
	srv.Close() // must not block on the hung handler
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("got a clean end of body, want the connection cut")
	}
}

// TestRefusesGIF: Gemini does not take image/gif: 400 INVALID_ARGUMENT, no reply used.
func TestRefusesGIF(t *testing.T) {
	script := fake.NewScript(fake.Reply{Text: "unused"})
	srv := geminitest.NewServer(script)
	defer srv.Close()
	body := `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/gif","data":"R0lGODlh"}},{"text":"hi"}]}]}`
	resp, err := http.Post(srv.URL()+streamPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "Unsupported MIME type: image/gif") || !strings.Contains(string(b), "INVALID_ARGUMENT") {
		t.Errorf("got %d %s, want 400 INVALID_ARGUMENT Unsupported MIME type", resp.StatusCode, b)
	}
	if n := len(script.Requests()); n != 0 {
		t.Errorf("recorded %d requests, want none", n)
	}
}
