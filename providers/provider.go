// Package providers defines how reef talks to LLMs: the Provider interface, normalised stream
// events, the errors callers branch on, and wrappers shared by every client (retry with backoff,
// model failover, a global concurrency cap, prompt-based tool calls for models without native
// tool calling). Clients for each wire protocol live in subpackages (openai, anthropic, gemini);
// fake plays scripted replies for tests and demos.
package providers

import (
	"context"
	"errors"
	"time"

	"github.com/reefgw/reef/messages"
)

// Provider streams one model answer.
type Provider interface {
	// Stream starts one LLM call. Errors before the first event (bad status, refused
	// connection) are returned here; errors during the stream come from Stream.Next.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Request is one LLM call, in reef's vocabulary. Clients translate it to their wire format.
type Request struct {
	Model string
	// System is the system prompt. SystemStable is the length of its stable prefix: clients
	// that support prompt caching put the cache boundary there (0 = no boundary).
	System       string
	SystemStable int
	// SystemTail, when set, follows System in the prompt: a caller passes a prompt's volatile
	// lines apart from its shared stable prefix, so that a call in flight holds no joined copy
	// of the whole prompt. Clients send System+SystemTail; SystemStable still applies to System.
	SystemTail string
	Messages   []messages.ChatMessage
	Tools      []messages.ToolSpec
	MaxTokens  int    // 0 = client default
	Reasoning  string // "", "off", "low", "medium", "high"
}

// EventKind names a stream event.
type EventKind int

const (
	EventText      EventKind = iota + 1 // Text holds a delta of the answer
	EventReasoning                      // Text holds a delta of visible reasoning
	EventToolCall                       // ToolCall holds one complete call (arguments fully assembled)
	EventUsage                          // Usage holds token counts (may come more than once; last wins)
	EventDone                           // StopReason is set; the stream ends after this event
)

// StopReason says why the model stopped.
type StopReason string

const (
	StopEnd      StopReason = "end"        // answered
	StopToolUse  StopReason = "tool_use"   // wants tool results
	StopMaxToken StopReason = "max_tokens" // cut by the output limit
	StopFiltered StopReason = "filtered"   // refused by a content filter
)

// Event is one normalised stream event.
type Event struct {
	Kind       EventKind
	Text       string
	ToolCall   messages.ToolCall
	Usage      messages.Usage
	StopReason StopReason
}

// Stream yields the events of one call. Next returns io.EOF after EventDone. A stream cut
// before EventDone returns an error wrapping ErrStreamCut (or ErrIdleTimeout); a tool call is
// only emitted once its arguments are complete, so a cut never yields half a call.
type Stream interface {
	Next() (Event, error)
	Close() error
}

// Sentinel errors callers branch on with errors.Is.
var (
	ErrRateLimited     = errors.New("rate limited")              // 429
	ErrOverloaded      = errors.New("provider overloaded")       // 503, 529
	ErrServer          = errors.New("provider server error")     // other 5xx
	ErrAuth            = errors.New("provider rejected the key") // 401, 403
	ErrContextOverflow = errors.New("context window exceeded")
	ErrBadRequest      = errors.New("provider rejected the request") // other 4xx
	ErrModelNotFound   = errors.New("model not found")               // a ModelNotFoundError
	ErrStreamCut       = errors.New("stream ended early")
	ErrIdleTimeout     = errors.New("stream idle timeout")
)

// APIError is an error answer from a provider. It matches the sentinels above with errors.Is.
type APIError struct {
	Provider   string        // "openai", "anthropic", "gemini"
	Status     int           // HTTP status, 0 for transport errors
	Kind       error         // one of the sentinels
	RetryAfter time.Duration // from Retry-After or the body, 0 when absent
	Message    string        // the provider's message, never containing the API key
}

func (e *APIError) Error() string {
	if e.Message == "" {
		return e.Provider + ": " + e.Kind.Error()
	}
	return e.Provider + ": " + e.Kind.Error() + ": " + e.Message
}

func (e *APIError) Is(target error) bool { return target == e.Kind }

// HTTPStatus is the status the provider answered, 0 for transport errors.
func (e *APIError) HTTPStatus() int { return e.Status }

// Retryable reports whether err is worth retrying on the same model: rate limits, overloads,
// server errors, transport failures before any event arrived.
func Retryable(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrOverloaded) ||
		errors.Is(err, ErrServer) || errors.Is(err, ErrStreamCut) || errors.Is(err, ErrIdleTimeout)
}

// Pinger is implemented by clients that can check reachability and credentials cheaply
// (reef doctor), for example by listing models.
type Pinger interface {
	Ping(ctx context.Context) error
}
