package gemini_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/gemini"
)

// rawServer answers every request with status, header and body as given, for wire cases the
// fake does not script.
func rawServer(t *testing.T, status int, header map[string]string, body string) *gemini.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return gemini.New(gemini.Config{BaseURL: srv.URL, APIKey: canary})
}

func data(json string) string { return "data: " + json + "\r\n\r\n" }

func TestStopReasons(t *testing.T) {
	tests := []struct {
		finish string
		want   providers.StopReason
	}{
		{"STOP", providers.StopEnd},
		{"MAX_TOKENS", providers.StopMaxToken},
		{"SAFETY", providers.StopFiltered},
		{"RECITATION", providers.StopFiltered},
		{"OTHER", providers.StopEnd},
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			c := rawServer(t, 200, nil, data(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}`)+
				data(`{"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"`+tt.finish+`"}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2,"thoughtsTokenCount":3}}`))
			evs, err := collect(t, c, userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			text, _, _, last := summarize(evs)
			if text != "Hi!" || last.Kind != providers.EventDone || last.StopReason != tt.want {
				t.Errorf("got text %q last %+v, want Hi! and done %q", text, last, tt.want)
			}
			usage := evs[len(evs)-2]
			if usage.Kind != providers.EventUsage || usage.Usage.InputTokens != 7 || usage.Usage.OutputTokens != 5 {
				t.Errorf("got %+v, want usage 7 in, 5 out (thoughts count as output)", usage)
			}
		})
	}
}

func TestStreamWireEdges(t *testing.T) {
	text := data(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}`) +
		": comment\r\n\r\n" +
		data(`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]}}]}`)
	tests := []struct {
		name string
		body string
		want error
		text string
		stop providers.StopReason
	}{
		{"EOF without finishReason", text, providers.ErrStreamCut, "Hello", ""},
		{"error inside the stream", text + data(`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`),
			providers.ErrOverloaded, "Hello", ""},
		{"prompt blocked", data(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}`),
			nil, "", providers.StopFiltered},
		{"garbage chunk", text + data(`{"candidates":[`), nil, "Hello", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := collect(t, rawServer(t, 200, nil, tt.body), userReq("hi"))
			if tt.name == "garbage chunk" {
				if err == nil || errors.Is(err, providers.ErrStreamCut) {
					t.Fatalf("got %v, want a decode error", err)
				}
			} else if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			txt, _, calls, last := summarize(evs)
			if txt != tt.text || len(calls) != 0 {
				t.Errorf("got text %q calls %v, want %q and no calls", txt, calls, tt.text)
			}
			if tt.stop != "" && (last.Kind != providers.EventDone || last.StopReason != tt.stop) {
				t.Errorf("got last %+v, want done %q", last, tt.stop)
			}
		})
	}
}

func TestHTTPErrorBodies(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		want       error
		retryAfter time.Duration
	}{
		{"Retry-After header wins", 429, map[string]string{"Retry-After": "3"},
			`{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"40s"}]}}`,
			providers.ErrRateLimited, 3 * time.Second},
		{"array-wrapped error with fractional delay", 429, nil,
			`[{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}]`,
			providers.ErrRateLimited, 1500 * time.Millisecond},
		{"overflow wording", 400, nil,
			`{"error":{"code":400,"message":"The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
			providers.ErrContextOverflow, 0},
		{"not JSON", 502, nil, `<html>bad gateway</html>`, providers.ErrServer, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rawServer(t, tt.status, tt.header, tt.body).Stream(context.Background(), userReq("hi"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var ae *providers.APIError
			if !errors.As(err, &ae) || ae.RetryAfter != tt.retryAfter || ae.Status != tt.status {
				t.Errorf("got %+v, want status %d RetryAfter %v", ae, tt.status, tt.retryAfter)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestUsageFromWire(t *testing.T) {
	c := rawServer(t, 200, nil, data(`{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":110,"cachedContentTokenCount":100,"candidatesTokenCount":4,"thoughtsTokenCount":6}}`))
	evs, err := collect(t, c, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	// InputTokens is the uncached input, as in the other clients; thoughts count as output.
	want := messages.Usage{InputTokens: 10, OutputTokens: 10, CacheReadTokens: 100}
	if diff := cmp.Diff(want, evs[1].Usage); evs[1].Kind != providers.EventUsage || diff != "" {
		t.Errorf("got %+v, want usage (-want +got):\n%s", evs[1], diff)
	}
}
