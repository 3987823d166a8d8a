// Package mcp offers the tools of MCP (Model Context Protocol) servers to reef's agents. Each
// configured server is reached over stdio (a command reef starts) or streamable HTTP (a URL)
// by a client of its own: rpc.go holds JSON-RPC sessions, stdio.go and streamable.go the two
// transports, protocol.go the handshake, tools/list and tools/call. It is tested against the
// official Go SDK's server and the reference server from npm (the SDK is a test dependency
// only: as reef's client it cost the binary 2 MB). A Server owns one supervised connection:
// a goroutine started by Start and stopped by Stop connects, lists the server's tools, waits
// for the connection to end and connects again with capped exponential backoff. Its tools
// are offered as "<server>__<tool>" with the server's own JSON schemas; a call waits for the
// connection (within its timeout), so a call made while the server restarts runs once it is
// back.
//
// Concurrency: Start, Stop, Tools and a Tool's Run are safe to call from any goroutine. The
// supervising goroutine is the only writer of the live session; Stop cancels it and waits.
package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// Separator joins a server's name and its tool's name: "files__read_file".
const Separator = "__"

// Defaults for a server's Config.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultConnectTimeout = 60 * time.Second
	DefaultMaxOutput      = 64 << 10 // bytes of text a call returns to the model
	minBackoff            = 500 * time.Millisecond
	maxBackoff            = 30 * time.Second
	// healthyAfter is how long a connection must last for the backoff to start over.
	healthyAfter = time.Minute
)

// namePattern is what a server's name may be: it becomes part of tool names, which
// providers restrict to [a-zA-Z0-9_-].
var namePattern = regexp.MustCompile(`^[a-z0-9-]+(_[a-z0-9-]+)*$`)

// Config is one MCP server: Command (stdio) or URL (streamable HTTP), not both.
type Config struct {
	Name string // the server's name in reef.yaml; its tools are Name + "__" + tool

	Command string
	Args    []string
	Env     []string // the child's whole environment ("NAME=value"); nil: an empty one
	Dir     string   // the child's working directory; "": reef's

	URL        string
	Headers    map[string]string // sent with every request (e.g. Authorization)
	HTTPClient *http.Client      // nil: a client of its own

	Timeout time.Duration // one call; default DefaultTimeout
	// ConnectTimeout bounds starting the server, the handshake and listing its tools;
	// default DefaultConnectTimeout (an npx server may first download itself).
	ConnectTimeout time.Duration
	MaxOutput      int // bytes of text per result; default DefaultMaxOutput
	// Secrets are redacted from the server's stderr before it is logged.
	Secrets []string
	// MinBackoff is the first wait before a reconnect, doubling up to 30 s; default 500 ms.
	MinBackoff time.Duration
}

func (c Config) validate() error {
	switch {
	case !namePattern.MatchString(c.Name) || len(c.Name) > 32:
		return fmt.Errorf("mcp: server name %q: use a-z, 0-9, '-' and single '_', at most 32 characters", c.Name)
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("mcp: server %s: set command (stdio) or url (streamable HTTP)", c.Name)
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("mcp: server %s: set command or url, not both", c.Name)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = minBackoff
	}
	return c
}

// ErrNotConnected is the error of a call made while its server is down and did not come
// back within the call's timeout.
var ErrNotConnected = errors.New("mcp: server not connected")
