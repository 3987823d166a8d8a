// Package openaitest is a fake OpenAI Chat Completions server on 127.0.0.1 that plays a
// fake.Script over the real streaming wire format (fake.OpenAIHandler), so the real openai
// client runs unchanged. It records every request into the script (normalised, plus the raw
// body and headers).
package openaitest

import (
	"net/http"
	"net/http/httptest"
	"sync"

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
	s.Server = httptest.NewServer(fake.OpenAIHandler(script, s.closing))
	return s
}

// Handler serves the fake on a listener of the caller's choosing: fake.OpenAIHandler, kept
// here for tests that used it.
func Handler(script *fake.Script, stop chan struct{}) http.Handler {
	return fake.OpenAIHandler(script, stop)
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
