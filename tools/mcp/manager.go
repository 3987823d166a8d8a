package mcp

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/tools"
)

// Manager owns the configured servers: the gateway starts it before it builds the agents'
// tools and stops it after the actors.
type Manager struct {
	servers []*Server
	log     zerolog.Logger
}

// NewManager checks every server's Config; it starts nothing.
func NewManager(cfgs []Config, log zerolog.Logger) (*Manager, error) {
	m := &Manager{log: log}
	for _, c := range cfgs {
		s, err := NewServer(c, log)
		if err != nil {
			return nil, err
		}
		m.servers = append(m.servers, s)
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].Name() < m.servers[j].Name() })
	return m, nil
}

// Start starts every server's supervisor and waits, at most wait, for each server's first
// attempt to connect and list its tools, so the first requests offer them. It returns every
// server as a tools.Source: a server that has not listed its tools by then is logged and
// keeps being retried, and its tools are offered once it lists them, as are tools any server
// adds later.
func (m *Manager) Start(ctx context.Context, wait time.Duration) []tools.Source {
	for _, s := range m.servers {
		s.Start(ctx)
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var wg sync.WaitGroup
	listed := make([]bool, len(m.servers))
	for i, s := range m.servers {
		wg.Go(func() { listed[i] = s.WaitListed(waitCtx) })
	}
	wg.Wait()
	out := make([]tools.Source, 0, len(m.servers))
	for i, s := range m.servers {
		if !listed[i] {
			m.log.Error().Err(s.err()).Str("mcp", s.Name()).
				Msg("mcp server did not start: its tools are offered once it does (log.level debug shows its output)")
		}
		out = append(out, s)
	}
	return out
}

// Stop stops every server and waits for them.
func (m *Manager) Stop() {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(s.Stop)
	}
	wg.Wait()
}
