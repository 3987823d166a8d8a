package providers

import (
	"errors"
	"fmt"
)

// DefaultMaxResponseBytes bounds what a client reads of one model response: the text, the
// reasoning and the tool-call arguments together. A model (or a server) that streams more is
// cut there: the client stops reading and the call fails with ErrResponseTooLarge, instead of
// holding the whole stream in memory (a 200 MB tool call once took the gateway to 900 MB).
// A real answer is far below it: 128k output tokens are about 512 KB.
const DefaultMaxResponseBytes = 16 << 20

// ErrResponseTooLarge is returned by Stream.Next when a response passed its byte bound.
var ErrResponseTooLarge = errors.New("model response too large")

// ResponseBudget counts the bytes of one response against its bound.
type ResponseBudget struct {
	max, used int
}

// NewResponseBudget bounds a response to max bytes (DefaultMaxResponseBytes when max <= 0).
func NewResponseBudget(max int) ResponseBudget {
	if max <= 0 {
		max = DefaultMaxResponseBytes
	}
	return ResponseBudget{max: max}
}

// Spend counts n more bytes; past the bound it returns an error wrapping ErrResponseTooLarge
// that names the provider.
func (b *ResponseBudget) Spend(provider string, n int) error {
	if b.max <= 0 {
		b.max = DefaultMaxResponseBytes
	}
	b.used += n
	if b.used > b.max {
		return fmt.Errorf("%s: %w: more than %d bytes of text, reasoning and tool-call arguments; reading stopped",
			provider, ErrResponseTooLarge, b.max)
	}
	return nil
}
