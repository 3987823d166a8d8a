// Package anthropictest is a fake Anthropic Messages API on 127.0.0.1 that plays a fake.Script
// in the real wire format: POST /v1/messages streams message_start, content blocks (thinking,
// text, tool_use with input_json_delta in pieces), message_delta and message_stop; faults
// (error statuses, overflow, hangs, delays, dropped connections) come from the Reply fields.
// GET /v1/models lists one model. Every request to /v1/messages is recorded in the Script.
package anthropictest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/reefgw/reef/providers/fake"
)

// Server is a running fake. Close it when done.
type Server struct {
	script *fake.Script
	srv    *httptest.Server
	key    string
	quit   chan struct{}
	once   sync.Once

	adaptiveOnly map[string]bool // more models that take only adaptive thinking
}

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the server refuse (401 authentication_error) requests whose x-api-key
// header differs from key.
func WithAPIKey(key string) Option { return func(s *Server) { s.key = key } }

// WithAdaptiveOnly makes the server treat models as taking only adaptive thinking, as it
// does Opus 4.7 and later: a request with the budget form gets the API's 400.
func WithAdaptiveOnly(models ...string) Option {
	return func(s *Server) {
		if s.adaptiveOnly == nil {
			s.adaptiveOnly = map[string]bool{}
		}
		for _, m := range models {
			s.adaptiveOnly[m] = true
		}
	}
}

// NewServer starts a fake playing script.
func NewServer(script *fake.Script, opts ...Option) *Server {
	s := &Server{script: script, quit: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("GET /v1/models", s.models)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL to give the client (without /v1).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server, releasing hung requests first.
func (s *Server) Close() {
	s.srv.CloseClientConnections() // cut streams mid-answer, as a crashed server would
	s.once.Do(func() { close(s.quit) })
	s.srv.Close()
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.key == "" || r.Header.Get("x-api-key") == s.key {
		return true
	}
	writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
	return false
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	w.Header().Set("content-type", "application/json")
	io.WriteString(w, `{"data":[{"type":"model","id":"claude-fake","display_name":"Claude Fake"}],"has_more":false}`)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, wire, err := decodeRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid JSON body: "+err.Error())
		return
	}
	if msg := refusedThinking(wire, s.adaptiveOnly); msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	if msg := refusedImage(wire); msg != "" { // refused before the model: no reply is used
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	req.Header = r.Header.Clone()
	reply := s.script.Next(req)
	if !s.wait(r.Context(), reply.Delay) {
		return
	}
	switch {
	case reply.Overflow:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum")
		return
	case reply.Status != 0:
		if reply.RetryAfter > 0 {
			w.Header().Set("retry-after", strconv.Itoa(int((reply.RetryAfter+time.Second-1)/time.Second)))
		}
		writeError(w, reply.Status, errorType(reply.Status), http.StatusText(reply.Status))
		return
	}
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if reply.Hang {
		if reply.Keepalive <= 0 {
			s.wait(r.Context(), -1)
			return
		}
		for s.wait(r.Context(), reply.Keepalive) {
			if _, err := io.WriteString(w, "event: ping\ndata: {\"type\": \"ping\"}\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		return
	}
	newWriter(w).play(req.Model, reply)
}

// wait sleeps d (forever when d < 0) and reports whether the request is still wanted.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d == 0 {
		return true
	}
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-after:
		return true
	case <-ctx.Done():
	case <-s.quit:
	}
	return false
}

// errorType is the Anthropic error type for an HTTP status.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529, 503:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the API writes ">" as it is
	enc.Encode(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": msg},
	})
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	w.Write(bytes.TrimSpace(b.Bytes()))
}
