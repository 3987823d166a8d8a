package main

import (
	"context"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
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

// startMCP starts the MCP servers and returns their tools; stop stops them.
func startMCP(cfg *configs.Config, log zerolog.Logger) (ts []tools.Tool, stop func(), err error) {
	if len(cfg.MCP.Servers) == 0 {
		return nil, func() {}, nil
	}
	m, err := newMCP(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	ts = m.Start(context.Background(), mcpStartWait)
	return ts, m.Stop, nil
}

// toolNames names tools.
func toolNames(ts []tools.Tool) []string {
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Spec().Name)
	}
	return names
}
