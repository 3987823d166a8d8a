package providers

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// StatusError builds the APIError for an HTTP error answer. overflow says whether the
// provider-specific body says the context window was exceeded (each client knows its wording).
// message is the provider's error text; it must not contain the API key.
func StatusError(provider string, status int, header http.Header, message string, overflow bool) *APIError {
	e := &APIError{Provider: provider, Status: status, Message: truncate(message, 500)}
	switch {
	case overflow:
		e.Kind = ErrContextOverflow
	case status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
	case status == http.StatusServiceUnavailable || status == 529:
		e.Kind = ErrOverloaded
	case status >= 500:
		e.Kind = ErrServer
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	default:
		e.Kind = ErrBadRequest
	}
	e.RetryAfter = RetryAfter(header)
	return e
}

// RetryAfter parses a Retry-After header (seconds or an HTTP date), also the
// retry-after-ms header some providers send. It returns 0 when absent or unparsable.
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n >= 0 {
			return time.Duration(n * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
