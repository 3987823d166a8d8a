// Package openai is a hand-written client for the OpenAI Chat Completions streaming API, which
// also serves Ollama, vLLM, llama.cpp server, OpenRouter, DeepSeek and Qwen through BaseURL.
// A Client is safe for concurrent use; each Stream call owns its response body.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody"
	"github.com/reefgw/reef/providers/sse"
	"github.com/reefgw/reef/redact"
)

// Config configures a Client. Zero fields take the defaults.
type Config struct {
	Name        string            // names the provider in errors; default "openai"
	BaseURL     string            // default https://api.openai.com/v1 (trailing slash optional)
	APIKey      string            // sent as a bearer token; never appears in errors
	HTTPClient  *http.Client      // default: no overall timeout, dial/TLS/header timeouts
	IdleTimeout time.Duration     // silence that cuts a stream (also the wait for headers); default 90s
	Header      map[string]string // extra request headers
	// MaxResponseBytes bounds the text, reasoning and tool-call arguments read of one
	// response; default providers.DefaultMaxResponseBytes.
	MaxResponseBytes int
}

// Client talks to one Chat Completions endpoint.
type Client struct {
	cfg      Config
	base     string
	official bool
	http     *http.Client
	tools    reqbody.Tools
	prefixes reqbody.Prefixes
}

var (
	_ providers.Provider    = (*Client)(nil)
	_ providers.Pinger      = (*Client)(nil)
	_ providers.ModelLister = (*Client)(nil)
)

// New returns a client. It starts nothing and makes no request.
func New(cfg Config) *Client {
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.openai.com/v1"
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 90 * time.Second
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	return &Client{cfg: cfg, base: base, official: isOfficial(base), http: hc}
}

func defaultHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   256, // calls in flight under the adaptive limit: fewer keeps dialing under load
		ForceAttemptHTTP2:     true,
	}}
}

// Stream starts one streamed chat completion.
func (c *Client) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	body, err := c.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.cfg.Name, err)
	}
	reqCtx, cancel := context.WithCancel(ctx)
	hreq, err := reqbody.NewRequest(reqCtx, http.MethodPost, c.base+"/chat/completions", body)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", c.cfg.Name, err)
	}
	c.setHeaders(hreq)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")

	// The idle watchdog also covers the wait for the response headers.
	// Its context is a child of reqCtx, so cancel ends the request.
	resp, _, err := providers.OpenStream(reqCtx, c.cfg.Name, c.cfg.IdleTimeout, func(ctx context.Context) (*http.Response, error) {
		return c.http.Do(hreq.WithContext(ctx))
	})
	if err != nil {
		cancel()
		return nil, c.transportError(ctx, err)
	}
	if resp.StatusCode/100 != 2 {
		defer cancel()
		return nil, providers.CheckModel(ctx, c.statusError(resp), c.cfg.Name, req.Model, c.Models)
	}
	return &stream{
		name:   c.cfg.Name,
		ctx:    ctx,
		cancel: cancel,
		sse:    sse.NewReader(resp.Body, c.cfg.IdleTimeout),
		budget: providers.NewResponseBudget(c.cfg.MaxResponseBytes),
	}, nil
}

// Ping lists the models: it checks the endpoint is reachable and the key accepted.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Models(ctx)
	return err
}

// Models lists the ids of the models the server offers (GET /models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/models", nil)
	if err != nil {
		return nil, fmt.Errorf("%s: list models: %w", c.cfg.Name, err)
	}
	c.setHeaders(hreq)
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, fmt.Errorf("list models: %w", err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, c.statusError(resp)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: list models: %w", c.cfg.Name, err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

func (c *Client) setHeaders(r *http.Request) {
	if c.cfg.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	for k, v := range c.cfg.Header {
		r.Header.Set(k, v)
	}
}

// transportError wraps a failed request. ctx's own end is reported as such; a watchdog
// cancel (already ErrIdleTimeout) as it is.
func (c *Client) transportError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", c.cfg.Name, ctx.Err())
	case errors.Is(err, providers.ErrIdleTimeout):
		return err
	}
	return &redactedError{msg: c.cfg.Name + ": " + c.redact(err.Error()), err: err}
}

// redactedError keeps a transport error matchable with errors.Is/As while its text has the
// API key removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// statusError reads an error answer into a providers.APIError.
func (c *Client) statusError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	msg, code := errorMessage(raw)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	msg = c.redact(msg)
	return providers.StatusError(c.cfg.Name, resp.StatusCode, resp.Header, msg, isOverflow(code, msg))
}

// errorMessage extracts the message and code of an error body in OpenAI's shape, or in the
// shapes of compatible servers ({"error": "text"}, {"detail": ...}, plain text).
func errorMessage(raw []byte) (msg, code string) {
	var v struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return strings.TrimSpace(string(raw)), ""
	}
	var we wireError
	if json.Unmarshal(v.Error, &we) == nil && we.Message != "" {
		return we.Message, strings.Trim(string(we.Code), `"`) + " " + we.Type
	}
	var s string
	if json.Unmarshal(v.Error, &s) == nil && s != "" {
		return s, ""
	}
	if len(v.Detail) > 0 {
		if json.Unmarshal(v.Detail, &s) == nil {
			return s, ""
		}
		return string(v.Detail), ""
	}
	return strings.TrimSpace(string(raw)), ""
}

// isOverflow recognises the context-window errors of OpenAI and compatible servers.
func isOverflow(code, msg string) bool {
	if strings.Contains(code, "context_length") || strings.Contains(code, "exceed_context") {
		return true
	}
	m := strings.ToLower(msg)
	for _, s := range []string{"maximum context length", "context length", "context size", "context window", "too many tokens"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// redact removes the API key from text that came from the server or the transport.
func (c *Client) redact(s string) string {
	return redact.New(c.cfg.APIKey).String(s) // a key under redact.MinLen (a local server's "x") is left alone
}
