// Package anthropic is reef's client for the Anthropic Messages API (POST /v1/messages with
// stream: true), hand-written over net/http and providers/sse. It translates a
// providers.Request to the wire format (system prompt with a cache boundary, strict
// user/assistant alternation, tool_use and tool_result blocks, extended thinking) and turns
// the SSE events back into providers.Events.
//
// A Client is safe for concurrent use; each Stream belongs to one goroutine.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody"
	"github.com/reefgw/reef/providers/sse"
	"github.com/reefgw/reef/redact"
)

// Defaults applied by New.
const (
	DefaultBaseURL     = "https://api.anthropic.com"
	DefaultMaxTokens   = 8192
	DefaultIdleTimeout = 90 * time.Second
	apiVersion         = "2023-06-01"
)

// Config configures a Client. Only APIKey is needed against the real API.
type Config struct {
	Name        string        // provider name in errors and events; default "anthropic"
	BaseURL     string        // default https://api.anthropic.com; a trailing /v1 is tolerated
	APIKey      string        // sent as x-api-key; never appears in errors
	HTTPClient  *http.Client  // default: no overall timeout, bounded dial/TLS/response headers
	IdleTimeout time.Duration // a stream silent this long is cut; default 90s
	MaxTokens   int           // max_tokens when the request leaves it 0; default 8192
	// MaxResponseBytes bounds the text, reasoning and tool-call arguments read of one
	// response; default providers.DefaultMaxResponseBytes.
	MaxResponseBytes int
}

// Client talks to one Anthropic-compatible endpoint.
type Client struct {
	name    string
	base    string
	key     string
	http    *http.Client
	idle    time.Duration
	maxToks int
	maxResp int

	tools    reqbody.Tools
	prefixes reqbody.Prefixes
	learned  sync.Map // model → struct{}: models that refused the budget form of thinking
}

var (
	_ providers.Provider    = (*Client)(nil)
	_ providers.Pinger      = (*Client)(nil)
	_ providers.ModelLister = (*Client)(nil)
)

// New returns a client. It starts nothing and does no network I/O.
func New(cfg Config) *Client {
	c := &Client{
		name:    cfg.Name,
		base:    strings.TrimRight(cfg.BaseURL, "/"),
		key:     cfg.APIKey,
		http:    cfg.HTTPClient,
		idle:    cfg.IdleTimeout,
		maxToks: cfg.MaxTokens,
		maxResp: cfg.MaxResponseBytes,
	}
	if c.name == "" {
		c.name = "anthropic"
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	c.base = strings.TrimSuffix(c.base, "/v1")
	if c.http == nil {
		c.http = defaultHTTPClient()
	}
	if c.idle <= 0 {
		c.idle = DefaultIdleTimeout
	}
	if c.maxToks <= 0 {
		c.maxToks = DefaultMaxTokens
	}
	return c
}

// defaultHTTPClient has no overall timeout (streams last minutes) but bounds each phase
// before the first byte, so a dead endpoint fails fast.
func defaultHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		ForceAttemptHTTP2:     true,
	}}
}

// Stream sends one Messages request and returns its event stream.
func (c *Client) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	body, err := c.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.name, err)
	}
	resp, cancel, err := c.open(ctx, "/v1/messages", body)
	if err != nil && thinkingBudget[req.Reasoning] > 0 && !c.adaptive(req.Model) && refusesBudget(err) {
		// A model that takes only adaptive thinking: learn it, and ask again in that form.
		c.learned.Store(req.Model, struct{}{})
		if body, err = c.encode(req); err != nil {
			return nil, fmt.Errorf("%s: encode request: %w", c.name, err)
		}
		resp, cancel, err = c.open(ctx, "/v1/messages", body)
	}
	if err != nil {
		return nil, providers.CheckModel(ctx, err, c.name, req.Model, c.Models)
	}
	r := sse.NewReader(resp.Body, c.idle)
	r.Keepalive = func(ev sse.Event) bool { return ev.Name == "ping" } // not progress: a pinging server still times out
	return newStream(ctx, cancel, c, r), nil
}

// open posts a streaming request; the idle timeout also bounds the wait for the headers.
func (c *Client) open(ctx context.Context, path string, body reqbody.Body) (*http.Response, context.CancelFunc, error) {
	return providers.OpenStream(ctx, c.name, c.idle, func(ctx context.Context) (*http.Response, error) {
		return c.do(ctx, http.MethodPost, path, body)
	})
}

// Ping lists models: it checks that the endpoint answers and accepts the key.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Models(ctx)
	return err
}

// Models lists the ids of the models the key may use (GET /v1/models, the first 1000).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	resp, err := c.do(ctx, http.MethodGet, "/v1/models?limit=1000", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: list models: %w", c.name, err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// do sends a request and returns a 2xx response, or the classified error.
func (c *Client) do(ctx context.Context, method, path string, body reqbody.Body) (*http.Response, error) {
	hreq, err := reqbody.NewRequest(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", c.name, c.redact(err.Error()))
	}
	hreq.Header.Set("x-api-key", c.key)
	hreq.Header.Set("anthropic-version", apiVersion)
	if body != nil {
		hreq.Header.Set("content-type", "application/json")
		hreq.Header.Set("accept", "text/event-stream")
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", c.name, ctx.Err())
		}
		return nil, &providers.APIError{Provider: c.name, Kind: providers.ErrServer, Message: c.redact(err.Error())}
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, c.statusError(resp.StatusCode, resp.Header, raw)
	}
	return resp, nil
}

// errorBody is Anthropic's error JSON, both as an HTTP body and as the data of an SSE error event.
type errorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// statusError classifies an HTTP error answer.
func (c *Client) statusError(status int, h http.Header, raw []byte) *providers.APIError {
	var eb errorBody
	msg := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &eb) == nil && eb.Error.Message != "" {
		msg = eb.Error.Type + ": " + eb.Error.Message
	}
	overflow := status == http.StatusRequestEntityTooLarge ||
		(status == http.StatusBadRequest && isOverflow(eb.Error.Message))
	e := providers.StatusError(c.name, status, h, c.redact(msg), overflow)
	if eb.Error.Type == "overloaded_error" && !overflow {
		e.Kind = providers.ErrOverloaded
	}
	return e
}

// streamError classifies an SSE `error` event, which carries no HTTP status.
func (c *Client) streamError(data string) *providers.APIError {
	var eb errorBody
	_ = json.Unmarshal([]byte(data), &eb)
	status := map[string]int{
		"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
		"not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
		"api_error": 500, "overloaded_error": 529,
	}[eb.Error.Type]
	if status == 0 {
		status = 500
	}
	e := c.statusError(status, nil, []byte(data))
	e.Status = 0 // not an HTTP status: the stream had already started with 200
	return e
}

// isOverflow reports whether an invalid_request_error message says the prompt is too long.
func isOverflow(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"prompt is too long", "context window", "context limit", "too many tokens", "exceed context"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// redact removes the API key from text that may end up in an error.
func (c *Client) redact(s string) string {
	return redact.New(c.key).String(s) // a key under redact.MinLen (a local server's "x") is left alone
}
