// Package openaitest is a fake OpenAI Chat Completions server on 127.0.0.1 that plays a
// fake.Script over the real streaming wire format, so the real openai client runs unchanged.
// It records every request into the script (normalised, plus the raw body and headers).
package openaitest

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	gojson "github.com/grbit/go-json"

	"github.com/reefgw/reef/providers/fake"
)

// Server is a running fake. Close it when done.
type Server struct {
	*httptest.Server
	script *fake.Script

	closeOnce sync.Once
	closing   chan struct{} // releases hanging handlers on Close
}

// NewServer starts a server playing script.
func NewServer(script *fake.Script) *Server {
	s := &Server{script: script, closing: make(chan struct{})}
	s.Server = httptest.NewServer(s.mux())
	return s
}

// Handler serves the fake on a listener of the caller's choosing (`reef fake-llm`). Requests
// that hang are released when stop is closed.
func Handler(script *fake.Script, stop chan struct{}) http.Handler {
	s := &Server{script: script, closing: stop}
	return s.mux()
}

func (s *Server) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	return mux
}

// URL returns the base URL to configure the client with, ending in /v1.
func (s *Server) URL() string { return s.Server.URL + "/v1" }

// Script returns the script the server plays.
func (s *Server) Script() *fake.Script { return s.script }

// Close releases hanging requests and stops the server.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.Server.CloseClientConnections()
		s.Server.Close()
	})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	ids := s.script.Models
	if len(ids) == 0 {
		ids = []string{"fake-model"}
	}
	data := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		data = append(data, map[string]any{"id": id, "object": "model", "owned_by": "reef"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	var req chatRequest
	if err := gojson.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "could not parse the JSON body: "+err.Error())
		return
	}
	rec := req.record()
	rec.Body = body
	rec.Header = r.Header.Clone()
	reply := s.script.Next(rec)

	if reply.Delay > 0 && !s.wait(r, reply.Delay) {
		return
	}
	switch {
	case reply.Overflow:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.")
		return
	case reply.Status != 0:
		s.status(w, r, reply)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
	if reply.Hang {
		s.wait(r, math.MaxInt64)
		return
	}
	st := &streamer{w: w, rc: http.NewResponseController(w), model: req.Model}
	st.play(reply)
}

// wait holds for d, or until the client leaves or the server closes; it reports whether d passed.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// status answers with an error in OpenAI's shape. Like OpenAI, a 401 echoes the key it got,
// so tests can check that clients redact it.
func (s *Server) status(w http.ResponseWriter, r *http.Request, reply fake.Reply) {
	if ra := reply.RetryAfter; ra > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ra.Seconds()))))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(ra.Milliseconds(), 10))
	}
	typ, code, msg := "server_error", "", "The server had an error while processing your request."
	switch reply.Status {
	case http.StatusTooManyRequests:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests."
	case http.StatusServiceUnavailable, 529:
		msg = "The engine is currently overloaded, please try again later."
	case http.StatusUnauthorized:
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		typ, code, msg = "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+key+"."
	case http.StatusBadRequest:
		typ, msg = "invalid_request_error", "Invalid request."
	case http.StatusNotFound: // what OpenAI answers for a model it does not offer
		typ, code, msg = "invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."
	}
	writeError(w, reply.Status, typ, code, msg)
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// readBody reads the request body into a buffer sized by Content-Length.
func readBody(r *http.Request) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(r.Body)
	return buf.Bytes(), err
}
