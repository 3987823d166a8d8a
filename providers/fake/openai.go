package fake

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	gojson "github.com/grbit/go-json"
)

// OpenAIHandler serves script over OpenAI's Chat Completions wire format
// (POST /v1/chat/completions with stream: true, GET /v1/models), so the real openai client runs
// unchanged against it: `reef fake-llm`, the benchmark's fake model and openaitest's test
// server all use it. Every request is recorded into the script (normalised, plus the raw body
// and headers). Requests that hang, or wait out a Reply's Delay, are released when stop is
// closed.
func OpenAIHandler(script *Script, stop <-chan struct{}) http.Handler {
	s := &openaiServer{script: script, closing: stop}
	return s.mux()
}

// openaiServer plays a Script over OpenAI's wire format.
type openaiServer struct {
	script  *Script
	closing <-chan struct{}
}

func (s *openaiServer) mux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/embeddings", s.embed)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := s.script.APIKey; key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			s.status(w, r, Reply{Status: http.StatusUnauthorized})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *openaiServer) models(w http.ResponseWriter, r *http.Request) {
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

func (s *openaiServer) chat(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	c := s.script.Capacity
	if !c.enter() {
		s.status(w, r, Reply{Status: http.StatusTooManyRequests, RetryAfter: c.RetryAfter})
		return
	}
	defer c.leave()
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
		if reply.Keepalive <= 0 {
			s.wait(r, math.MaxInt64)
			return
		}
		for s.wait(r, reply.Keepalive) {
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
		}
		return
	}
	st := &streamer{w: w, rc: http.NewResponseController(w), model: req.Model}
	st.play(reply)
}

// wait holds for d, or until the client leaves or the server closes; it reports whether d passed.
func (s *openaiServer) wait(r *http.Request, d time.Duration) bool {
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
func (s *openaiServer) status(w http.ResponseWriter, r *http.Request, reply Reply) {
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
