// Package geminitest is a fake Gemini API on 127.0.0.1 that plays a fake.Script in the real
// wire format: POST /v1beta/models/{model}:streamGenerateContent?alt=sse streams
// GenerateContentResponse chunks (thought parts, text over several chunks, functionCall parts
// in the final chunk with finishReason and usageMetadata); POST .../{model}:generateContent
// answers one GenerateContentResponse with the reply's text (transcription uses it; inline
// data parts are recorded as the request message's Media); faults (Google error bodies,
// overflow, hangs, delays, dropped connections) come from the Reply fields. GET
// /v1beta/models lists one model. Every generate request is recorded in the Script.
package geminitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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

	mu   sync.Mutex
	uris []string
}

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the server refuse requests without the x-goog-api-key header (403
// PERMISSION_DENIED) or with a different key (400 API_KEY_INVALID), as Google does.
func WithAPIKey(key string) Option { return func(s *Server) { s.key = key } }

// NewServer starts a fake playing script.
func NewServer(script *fake.Script, opts ...Option) *Server {
	s := &Server{script: script, quit: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1beta/models/{call}", s.generate) // also :batchEmbedContents
	mux.HandleFunc("GET /v1beta/models", s.models)
	s.srv = httptest.NewServer(s.record(mux))
	return s
}

// URL is the base URL to give the client (without /v1beta).
func (s *Server) URL() string { return s.srv.URL }

// RequestURIs returns the path and query of every request served, to check that no secret
// travels in a URL.
func (s *Server) RequestURIs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.uris...)
}

// Close stops the server, releasing hung requests first.
func (s *Server) Close() {
	s.srv.CloseClientConnections() // cut streams mid-answer, as a crashed server would
	s.once.Do(func() { close(s.quit) })
	s.srv.Close()
}

func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.uris = append(s.uris, r.RequestURI)
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	got := r.Header.Get("x-goog-api-key")
	switch {
	case s.key == "" || got == s.key:
		return true
	case got == "":
		writeError(w, http.StatusForbidden, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", nil)
	default:
		writeError(w, http.StatusBadRequest, "API key not valid. Please pass a valid API key.",
			[]any{obj{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}})
	}
	return false
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	w.Header().Set("content-type", "application/json")
	io.WriteString(w, `{"models":[{"name":"models/gemini-fake","displayName":"Gemini Fake","supportedGenerationMethods":["generateContent","streamGenerateContent"]}]}`)
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	if method == "batchEmbedContents" {
		if s.authorized(w, r) {
			s.embed(w, r, model)
		}
		return
	}
	stream := method == "streamGenerateContent" && r.URL.Query().Get("alt") == "sse"
	if !stream && method != "generateContent" {
		writeError(w, http.StatusNotFound, "the fake serves only :streamGenerateContent?alt=sse and :generateContent", nil)
		return
	}
	reply, ok := s.next(w, r, model)
	if !ok {
		return
	}
	if !stream {
		writeAnswer(w, model, reply)
		return
	}
	w.Header().Set("content-type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if reply.Hang {
		if reply.Keepalive <= 0 {
			s.wait(r.Context(), -1)
			return
		}
		for s.wait(r.Context(), reply.Keepalive) {
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		return
	}
	newWriter(w, model).play(reply)
}

// next reads a generate request, records it and takes the script's reply for it. It answers
// the faults that come before the first byte itself (bad key, bad JSON, a delay the client
// gave up on, overflow, an error status) and then reports false.
func (s *Server) next(w http.ResponseWriter, r *http.Request, model string) (fake.Reply, bool) {
	if !s.authorized(w, r) {
		return fake.Reply{}, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return fake.Reply{}, false
	}
	req, err := decodeRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON payload received. "+err.Error(), nil)
		return fake.Reply{}, false
	}
	if msg := refused(body); msg != "" {
		writeError(w, http.StatusBadRequest, msg, nil)
		return fake.Reply{}, false
	}
	req.Model = model
	req.Header = r.Header.Clone()
	reply := s.script.Next(req)
	if !s.wait(r.Context(), reply.Delay) {
		return reply, false
	}
	switch {
	case reply.Overflow:
		writeError(w, http.StatusBadRequest, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", nil)
		return reply, false
	case reply.Status != 0:
		var details []any
		if reply.RetryAfter > 0 {
			details = append(details, obj{"@type": "type.googleapis.com/google.rpc.RetryInfo",
				"retryDelay": reply.RetryAfter.String()})
		}
		writeError(w, reply.Status, http.StatusText(reply.Status), details)
		return reply, false
	}
	return reply, true
}

// writeAnswer answers a unary :generateContent with one GenerateContentResponse holding the
// reply's text.
func writeAnswer(w http.ResponseWriter, model string, reply fake.Reply) {
	b, _ := json.Marshal(obj{
		"candidates": []obj{{"content": obj{"role": "model", "parts": []obj{{"text": reply.Text}}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": max(reply.Usage.InputTokens, 1), "candidatesTokenCount": max(reply.Usage.OutputTokens, 1),
			"totalTokenCount": max(reply.Usage.InputTokens, 1) + max(reply.Usage.OutputTokens, 1)},
		"modelVersion": model,
	})
	w.Header().Set("content-type", "application/json; charset=UTF-8")
	w.Write(b)
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

type obj = map[string]any

// statusNames are the google.rpc codes Google sends with each HTTP status.
var statusNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

func writeError(w http.ResponseWriter, status int, msg string, details []any) {
	name := statusNames[status]
	if name == "" {
		name = "UNKNOWN"
	}
	e := obj{"code": status, "message": msg, "status": name}
	if len(details) > 0 {
		e["details"] = details
	}
	b, _ := json.Marshal(obj{"error": e})
	w.Header().Set("content-type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(b)
}
