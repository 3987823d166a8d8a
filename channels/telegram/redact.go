package telegram

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mymmrac/telego"
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
		// unwind per call (a visible share of the gateway's CPU under load). An empty
		// Error formats without one; telego reads Error only when !Ok (or with
		// WithWarnings, which reef does not use).
		resp.Error = &ta.Error{}
	}
	return resp, nil
}

// redactedError carries the redacted text of an error. It does not unwrap (the chain holds
// the token) but answers errors.Is for the chain, so context.Canceled and friends still match,
// and errors.As for the network's errors, which name addresses but never the URL, so that
// status can say why in plain words (internal/explain).
type redactedError struct {
	msg    string
	err    error
	host   string // the request's host (its URL's, without the path that holds the token)
	status int    // the HTTP status of a 5xx answer (telego reports only its number)
}

// HTTPStatus is the 5xx status Telegram's server answered, 0 for other errors
// (explain.StatusCoder).
func (e *redactedError) HTTPStatus() int { return e.status }

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

func (e *redactedError) As(target any) bool {
	switch target.(type) {
	case **net.DNSError, **net.OpError, *x509.UnknownAuthorityError, *x509.HostnameError,
		*x509.CertificateInvalidError, **tls.CertificateVerificationError, *net.Error:
		return errors.As(e.err, target)
	}
	return false
}

// RequestHost is the host the failed request went to (explain.Failure names it).
func (e *redactedError) RequestHost() string { return e.host }

func redactError(err error, token string) error {
	if err == nil {
		return nil
	}
	r := &redactedError{msg: redact(err.Error(), token), err: err}
	if _, code, ok := strings.Cut(err.Error(), "internal server error: "); ok { // telegoapi.HTTPCaller's 5xx
		r.status, _ = strconv.Atoi(code)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			r.host = u.Host
		}
	}
	return r
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
// copied its stack once or twice (seen in reef-bench profiles).
type stdJSONConstructor struct{ ta.DefaultConstructor }

func (stdJSONConstructor) JSONRequest(parameters any) (*ta.RequestData, error) {
	data, err := json.Marshal(withChatID(parameters))
	if err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return &ta.RequestData{ContentType: ta.ContentTypeJSON, BodyRaw: data}, nil
}

// withChatID wraps the parameters of the calls made for every reply so that their chat_id is
// encoded by chatIDJSON: telego.ChatID's own MarshalJSON encodes the number with go-json, the
// deep-stack encoder again (a large share of the gateway's stack growth in a burst). A field of the
// wrapper hides the embedded struct's field of the same JSON name (encoding/json's rule for
// embedded structs), so the output is the same JSON.
func withChatID(parameters any) any {
	switch p := parameters.(type) {
	case *telego.SendMessageParams:
		return struct {
			*telego.SendMessageParams
			ChatID chatIDJSON `json:"chat_id"`
		}{p, chatIDJSON(p.ChatID)}
	case *telego.EditMessageTextParams:
		return struct {
			*telego.EditMessageTextParams
			ChatID chatIDJSON `json:"chat_id,omitzero"`
		}{p, chatIDJSON(p.ChatID)}
	case *telego.SendChatActionParams:
		return struct {
			*telego.SendChatActionParams
			ChatID chatIDJSON `json:"chat_id"`
		}{p, chatIDJSON(p.ChatID)}
	case *telego.DeleteMessageParams:
		return struct {
			*telego.DeleteMessageParams
			ChatID chatIDJSON `json:"chat_id"`
		}{p, chatIDJSON(p.ChatID)}
	}
	return parameters
}

// chatIDJSON is telego.ChatID encoded as telego encodes it (the number, else the @username),
// without go-json.
type chatIDJSON telego.ChatID

func (c chatIDJSON) MarshalJSON() ([]byte, error) {
	switch {
	case c.ID != 0:
		return strconv.AppendInt(nil, c.ID, 10), nil
	case c.Username != "":
		return json.Marshal(c.Username)
	}
	return []byte(`""`), nil
}
