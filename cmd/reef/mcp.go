package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/mcp"
)

// mcpStartWait bounds how long reef waits at start for the MCP servers to list their tools
// (a server run with npx may download itself first).
const mcpStartWait = 90 * time.Second

// newMCP builds the configured MCP servers; nothing starts until Start. A stdio server gets
// reef's environment without reef's secrets (as exec commands do), plus its env block.
func newMCP(cfg *configs.Config, log zerolog.Logger) (*mcp.Manager, error) {
	secrets := cfg.Secrets()
	base := exec.FilterEnv(os.Environ(), secrets)
	var cfgs []mcp.Config
	for name, s := range cfg.MCP.Servers {
		c := mcp.Config{Name: name, Command: s.Command, Args: s.Args, Dir: s.Cwd, URL: s.URL, Headers: s.Headers,
			Timeout: time.Duration(s.TimeoutSeconds) * time.Second, MaxOutput: s.MaxOutputBytes, Secrets: secrets}
		if s.URL != "" {
			hc, err := mcpHTTPClient(cfg.Tools.Web.AllowPrivate, s.URL)
			if err != nil {
				return nil, fmt.Errorf("mcp.servers.%s.url: %w", name, err)
			}
			c.HTTPClient = hc
		}
		if s.Command != "" {
			c.Env = slices.Clone(base)
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				c.Env = append(c.Env, k+"="+s.Env[k])
			}
		}
		cfgs = append(cfgs, c)
	}
	return mcp.NewManager(cfgs, log)
}

// mcpHTTPClient is the client of an MCP server reached over HTTP: every connection passes the
// SSRF guard, whose exceptions are tools.web.allowPrivate and the configured URL's own host
// (the owner named it, and MCP servers often listen on this machine). So a redirect, or a DNS
// answer that changes, cannot lead it to another private address or the metadata service. It
// has no overall timeout: the server's event stream stays open; each call has its own.
func mcpHTTPClient(allowPrivate []string, rawURL string) (*http.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	allow := append(slices.Clone(allowPrivate), strings.Trim(u.Hostname(), "[]"))
	guard, err := netguard.New(netguard.Config{AllowPrivate: allow})
	if err != nil {
		return nil, err
	}
	if err := guard.CheckURL(u); err != nil {
		return nil, err
	}
	tr := &http.Transport{Proxy: nil, DialContext: guard.DialContext, ForceAttemptHTTP2: true,
		MaxIdleConns: 4, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 {
			return fmt.Errorf("stopped after %d redirects", len(via))
		}
		return guard.CheckURL(req.URL)
	}}, nil
}

// startMCP starts the MCP servers and returns them as sources of tools: the tools each one
// lists now and later (tools.NewRegistryWith); stop stops them.
func startMCP(cfg *configs.Config, log zerolog.Logger) (srcs []tools.Source, stop func(), err error) {
	if len(cfg.MCP.Servers) == 0 {
		return nil, func() {}, nil
	}
	m, err := newMCP(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	srcs = m.Start(context.Background(), mcpStartWait)
	return srcs, m.Stop, nil
}

// toolNames names tools.
func toolNames(ts []tools.Tool) []string {
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Spec().Name)
	}
	return names
}
