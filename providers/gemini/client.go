// Package gemini is reef's client for the Gemini API's streamGenerateContent endpoint
// (POST /v1beta/models/{model}:streamGenerateContent?alt=sse), hand-written over net/http and
// providers/sse. It translates a providers.Request to Gemini contents (user/model turns,
// functionCall and functionResponse parts, a JSON schema cleaned to the subset Gemini
// accepts) and turns each streamed GenerateContentResponse back into providers.Events.
//
// The API key travels in the x-goog-api-key header, never in the URL, so it cannot leak
// through an error or a log line that quotes the URL.
//
// A Client is safe for concurrent use; each Stream belongs to one goroutine.
package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody"
	"github.com/reefgw/reef/providers/sse"
	"github.com/reefgw/reef/redact"
)

// Defaults applied by New.
const (
	DefaultBaseURL     = "https://generativelanguage.googleapis.com"
	DefaultIdleTimeout = 90 * time.Second
)

// Config configures a Client. Only APIKey is needed against the real API.
type Config struct {
	Name        string        // provider name in errors; default "gemini"
	BaseURL     string        // default https://generativelanguage.googleapis.com; a trailing /v1beta is tolerated
	APIKey      string        // sent as x-goog-api-key; never appears in errors or URLs
	HTTPClient  *http.Client  // default: no overall timeout, bounded dial/TLS/response headers
	IdleTimeout time.Duration // a stream silent this long is cut; default 90s
	// MaxResponseBytes bounds the text, reasoning and tool-call arguments read of one
	// response; default providers.DefaultMaxResponseBytes.
	MaxResponseBytes int
}

// Client talks to one Gemini endpoint.
type Client struct {
	name string
	base string
	key  string
	http *http.Client
	idle time.Duration
	max  int // MaxResponseBytes

	tools    reqbody.Tools
	prefixes reqbody.Prefixes
}

var (
	_ providers.Provider    = (*Client)(nil)
	_ providers.Pinger      = (*Client)(nil)
	_ providers.ModelLister = (*Client)(nil)
)

// New returns a client. It starts nothing and does no network I/O.
func New(cfg Config) *Client {
	c := &Client{
		name: cfg.Name,
		base: strings.TrimRight(cfg.BaseURL, "/"),
		key:  cfg.APIKey,
		http: cfg.HTTPClient,
		idle: cfg.IdleTimeout,
		max:  cfg.MaxResponseBytes,
	}
	if c.name == "" {
		c.name = "gemini"
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	c.base = strings.TrimSuffix(c.base, "/v1beta")
	if c.http == nil {
		c.http = defaultHTTPClient()
	}
	if c.idle <= 0 {
		c.idle = DefaultIdleTimeout
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

// Stream sends one streamGenerateContent request and returns its event stream.
func (c *Client) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	body, err := c.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.name, err)
	}
	model := strings.TrimPrefix(req.Model, "models/")
	path := "/v1beta/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse"
	resp, cancel, err := c.open(ctx, path, body)
	if err != nil {
		return nil, providers.CheckModel(ctx, err, c.name, model, c.Models)
	}
	return newStream(ctx, cancel, c, sse.NewReader(resp.Body, c.idle)), nil
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

// Models lists the models the key may use (GET /v1beta/models, the first 1000), without
// the "models/" prefix.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	resp, err := c.do(ctx, http.MethodGet, "/v1beta/models?pageSize=1000", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: list models: %w", c.name, err)
	}
	names := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		names = append(names, strings.TrimPrefix(m.Name, "models/"))
	}
	return names, nil
}

// do sends a request and returns a 2xx response, or the classified error.
func (c *Client) do(ctx context.Context, method, path string, body reqbody.Body) (*http.Response, error) {
	hreq, err := reqbody.NewRequest(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", c.name, c.redact(err.Error()))
	}
	hreq.Header.Set("x-goog-api-key", c.key)
	if body != nil {
		hreq.Header.Set("content-type", "application/json")
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

// redact removes the API key from text that may end up in an error.
func (c *Client) redact(s string) string {
	return redact.New(c.key).String(s) // a key under redact.MinLen (a local server's "x") is left alone
}
