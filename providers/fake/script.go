// Package fake plays scripted LLM answers, for tests and demos. A Script is a queue of Replies
// (text, tool calls, or faults such as 429, 500, 529, a hang, a stream cut in the middle of a
// tool call) and a record of every request it served. Provider plays a Script in process;
// OpenAIHandler plays it over HTTP in OpenAI's wire format (`reef fake-llm`), and the test
// servers (openai/openaitest, anthropic/anthropictest, gemini/geminitest) play the same Script
// over HTTP so the real clients run unchanged.
package fake

import (
	"sync"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// Reply is one scripted LLM answer. The zero fault fields mean a normal streamed answer of
// Reasoning, then Text, then ToolCalls, then usage and the stop reason.
type Reply struct {
	Text      string
	Reasoning string
	ToolCalls []messages.ToolCall // Arguments are sent as-is (malformed JSON stays malformed)
	Usage     messages.Usage

	Status     int           // answer with this HTTP error status instead (429, 500, 503, 529, 401, 400)
	RetryAfter time.Duration // with Status 429/503: the Retry-After to send
	Overflow   bool          // answer with the provider's context-window-exceeded error (HTTP 400)
	Hang       bool          // accept the request, then send nothing until the client gives up
	Keepalive  time.Duration // with Hang: send only a keep-alive (an SSE comment, Anthropic's ping) this often
	Delay      time.Duration // wait this long before the first byte (honouring cancellation)
	CutInTool  bool          // stream the first tool call's arguments halfway, then drop the connection
	CutInText  bool          // stream half of Text, then drop the connection
	// SplitChars cuts every character outside the BMP (an emoji) of the text, reasoning and
	// tool-call arguments across two chunks, as a proxy cutting by UTF-16 units does: the
	// JSON escape of the high surrogate ends one chunk, the low one starts the next (HTTP fakes).
	SplitChars bool
}

// Request is what a fake recorded of one request, normalised across wire formats.
type Request struct {
	Model     string
	Reasoning string // the reasoning effort asked for
	MaxTokens int    // the output cap asked for (in-process fake only)
	System    string
	Messages  []messages.ChatMessage
	Tools     []string // tool names offered
	Body      []byte   // the raw request body (for wire-level assertions, e.g. no secrets)
	Header    map[string][]string
	Priority  providers.Priority // the call's priority (in-process fake only: it is not on the wire)
}

// Script is a queue of replies shared by a fake's requests. Safe for concurrent use.
type Script struct {
	mu       sync.Mutex
	replies  []Reply
	requests []Request
	// Respond, when set, answers requests once the queue is empty. When both are empty the
	// fake answers "ok".
	Respond func(Request) Reply
	// KeepRequests, when > 0, bounds the record to about the last KeepRequests requests
	// (long benchmarks); 0 keeps every request.
	KeepRequests int
	// Models, when set, is what the OpenAI fake's GET /v1/models lists (default: fake-model).
	Models []string
	// APIKey, when set, is the only key the OpenAI fake accepts: a request with another (or
	// none) gets 401 invalid_api_key, echoing the key it got as OpenAI does. Set it before
	// the fake serves.
	APIKey string
	// Capacity, when set, bounds the requests the OpenAI fake serves at once: the rest get
	// 429 with Retry-After (a provider's concurrency limit).
	Capacity *Capacity

	embeddings *Embeddings // POST /v1/embeddings: its settings and record (Embeddings())
}

// NewScript returns a script that plays replies in order.
func NewScript(replies ...Reply) *Script {
	return &Script{replies: append([]Reply(nil), replies...)}
}

// Add appends replies to the queue.
func (s *Script) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Next records req and returns the reply to play for it.
func (s *Script) Next(req Request) Reply {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if k := s.KeepRequests; k > 0 && len(s.requests) >= 2*k {
		s.requests = append(s.requests[:0], s.requests[len(s.requests)-k:]...)
	}
	if len(s.replies) > 0 {
		r := s.replies[0]
		s.replies = s.replies[1:]
		s.mu.Unlock()
		return r
	}
	respond := s.Respond
	s.mu.Unlock()
	if respond != nil {
		return respond(req)
	}
	return Reply{Text: "ok"}
}

// Requests returns a copy of every request recorded so far.
func (s *Script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	reqs := s.requests
	if k := s.KeepRequests; k > 0 && len(reqs) > k {
		reqs = reqs[len(reqs)-k:]
	}
	return append([]Request(nil), reqs...)
}

// Pending returns how many queued replies have not been played.
func (s *Script) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}
