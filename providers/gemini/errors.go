package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/reefgw/reef/providers"
)

// googleError is the body of a Google API error, {"error": {...}}; the streaming endpoint
// may wrap it in an array.
type googleError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"` // RESOURCE_EXHAUSTED, INVALID_ARGUMENT, ...
	Details []struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason"`     // google.rpc.ErrorInfo
		RetryDelay string `json:"retryDelay"` // google.rpc.RetryInfo, e.g. "12s"
	} `json:"details"`
}

type errorEnvelope struct {
	Error *googleError `json:"error"`
}

// parseError decodes an error body; it returns nil when raw is not a Google error.
func parseError(raw []byte) *googleError {
	raw = bytes.TrimSpace(raw)
	var env errorEnvelope
	if len(raw) > 0 && raw[0] == '[' {
		var arr []errorEnvelope
		if json.Unmarshal(raw, &arr) != nil || len(arr) == 0 {
			return nil
		}
		env = arr[0]
	} else if json.Unmarshal(raw, &env) != nil {
		return nil
	}
	return env.Error
}

// statusError classifies an HTTP error answer.
func (c *Client) statusError(status int, h http.Header, raw []byte) *providers.APIError {
	ge := parseError(raw)
	if ge == nil {
		return providers.StatusError(c.name, status, h, c.redact(strings.TrimSpace(string(raw))), false)
	}
	return c.apiError(status, h, ge)
}

// apiError classifies a decoded Google error (from an HTTP answer or inside the stream).
func (c *Client) apiError(status int, h http.Header, ge *googleError) *providers.APIError {
	msg := ge.Message
	if ge.Status != "" {
		msg = ge.Status + ": " + msg
	}
	overflow := status == http.StatusBadRequest && isOverflow(ge.Message)
	e := providers.StatusError(c.name, status, h, c.redact(msg), overflow)
	switch {
	case overflow:
	case ge.Status == "RESOURCE_EXHAUSTED":
		e.Kind = providers.ErrRateLimited
	case ge.Status == "UNAVAILABLE":
		e.Kind = providers.ErrOverloaded
	case ge.Status == "UNAUTHENTICATED" || ge.Status == "PERMISSION_DENIED" || badKey(ge):
		e.Kind = providers.ErrAuth // Gemini answers a wrong key with 400 API_KEY_INVALID
	}
	if e.RetryAfter == 0 {
		for _, d := range ge.Details {
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				e.RetryAfter = v
			}
		}
	}
	return e
}

func badKey(ge *googleError) bool {
	for _, d := range ge.Details {
		if d.Reason == "API_KEY_INVALID" {
			return true
		}
	}
	return strings.Contains(ge.Message, "API key not valid")
}

// isOverflow reports whether an INVALID_ARGUMENT message says the prompt exceeds the context.
func isOverflow(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "exceeds the maximum number of tokens") ||
		(strings.Contains(m, "input token count") && strings.Contains(m, "exceeds the maximum")) ||
		strings.Contains(m, "context window")
}
