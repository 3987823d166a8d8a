package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	ta "github.com/mymmrac/telego/telegoapi"
)

// redactingCaller calls the Bot API over net/http and removes the token from every error
// before telego (which wraps and returns it) sees it: net/http puts the request URL, and
// with it the token, into its errors.
type redactingCaller struct {
	client *http.Client
	token  string
}

func (c redactingCaller) Call(ctx context.Context, url string, data *ta.RequestData) (*ta.Response, error) {
	resp, err := ta.HTTPCaller{Client: c.client}.Call(ctx, url, data)
	if err != nil {
		return nil, redactError(err, c.token)
	}
	if resp.Ok && resp.Error == nil {
		// telego formats every response for its debug log, even a discarded one, and
		// formatting a nil *Error panics inside fmt (which recovers): a panic and a stack
		// unwind per call (~10% of the gateway's CPU under load, reef bench). An empty
		// Error formats without one; telego reads Error only when !Ok (or with
		// WithWarnings, which reef does not use).
		resp.Error = &ta.Error{}
	}
	return resp, nil
}

// redactedError carries the redacted text of an error. It does not unwrap (the chain holds
// the token) but answers errors.Is for the chain, so context.Canceled and friends still match.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

func redactError(err error, token string) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: redact(err.Error(), token), err: err}
}

// redact replaces the token, and its secret part alone, with "<redacted>".
func redact(s, token string) string {
	if token == "" {
		return s
	}
	s = strings.ReplaceAll(s, token, "<redacted>")
	if _, secret, ok := strings.Cut(token, ":"); ok && secret != "" {
		s = strings.ReplaceAll(s, secret, "<redacted>")
	}
	return s
}

// stdJSONConstructor encodes request bodies with encoding/json instead of telego's go-json,
// whose encoder needs a deep stack: nearly every call, made on a fresh goroutine, grew and
// copied its stack once or twice (reef bench).
type stdJSONConstructor struct{ ta.DefaultConstructor }

func (stdJSONConstructor) JSONRequest(parameters any) (*ta.RequestData, error) {
	data, err := json.Marshal(parameters)
	if err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return &ta.RequestData{ContentType: ta.ContentTypeJSON, BodyRaw: data}, nil
}
