package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/tools"
)

// mcpSet is the MCP servers whose tools the agents use; a reload that changes mcp starts a
// new set and stops the old one once the new agents run.
type mcpSet struct {
	mu      sync.Mutex
	sources []tools.Source
	stop    func()
}

func (m *mcpSet) current() []tools.Source {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sources
}

// replace puts srcs in place and returns the stop function of the old set.
func (m *mcpSet) replace(srcs []tools.Source, stop func()) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.stop
	m.sources, m.stop = srcs, stop
	return old
}

func (m *mcpSet) close() { m.replace(nil, func() {})() }

// agentKeys are the top-level sections the agents are built from: a change to any of them
// rebuilds every agent (clients, tools, policies); otherwise the running ones are kept.
var agentKeys = []string{"providers", "models", "agents", "llm", "tools", "mcp"}

// built is what a reload prepared: the new settings, and what to do once they run (stop
// the old MCP servers) or if they were refused (stop the new ones).
type built struct {
	settings actors.Settings
	accounts map[string]configs.ChannelAccount // the platform accounts, by channels.ID
	commit   func()
	abort    func()
}

// build prepares the live settings of next from the running ones: accounts whose connection
// is unchanged keep their Channel (and so their Connector and connection), others get a new
// one; agents are rebuilt when a section they come from changed. Nothing is applied yet.
func (l *reloader) build(next *configs.Config, changes []configs.Change) (*built, error) {
	cur := l.rt.Settings()
	b := &built{commit: func() {}, abort: func() {}}
	set := channelSet{chans: map[string]channels.Channel{}, access: maps.Clone(cur.Access), streaming: maps.Clone(cur.Streaming)}
	media := mediaClient(next)
	accounts := map[string]configs.ChannelAccount{}
	for _, a := range next.Channels.Accounts() {
		id := channels.ID(a.Channel, a.Account)
		accounts[id] = a
		ch := cur.Channels[id]
		if old, ok := l.accounts[id]; !ok || !configs.SameConnection(old, a) || ch == nil {
			var err error
			if ch, err = newChannel(a, next.DataDir, media, l.gate(), l.log); err != nil {
				return nil, err
			}
		}
		set.add(id, ch, a.Access())
		set.streaming[id] = a.Streaming()
	}
	for id, ch := range cur.Channels { // the web listener's channels and the terminal stay
		if _, platform := l.accounts[id]; !platform {
			set.chans[id] = ch
		}
	}
	for id := range l.accounts {
		if _, ok := accounts[id]; !ok {
			delete(set.streaming, id)
		}
	}
	agents := cur.Agents
	if touches(changes, agentKeys...) {
		srcs := l.rt.mcp.current()
		if touches(changes, "mcp") {
			newSrcs, stop, err := startMCP(next, l.log)
			if err != nil {
				return nil, fmt.Errorf("mcp: %w", err)
			}
			srcs = newSrcs
			b.abort = stop
			b.commit = func() { l.rt.mcp.replace(newSrcs, stop)() }
		}
		var err error
		if agents, err = buildAgents(next, l.rt.memory, l.rt.outages, l.rt.metrics, l.rt.procs, srcs...); err != nil {
			b.abort()
			return nil, err
		}
	}
	grants, err := toolGrants(next)
	if err != nil {
		b.abort()
		return nil, err
	}
	for id, g := range cur.ToolGrants { // WebChat's and the API's have none from the config
		if _, platform := l.accounts[id]; !platform {
			if _, ok := grants[id]; !ok {
				grants[id] = g
			}
		}
	}
	secrets := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(cur.Secrets), next.Secrets()...))))
	b.settings = actors.Settings{Agents: agents, Routes: routes(next), Channels: set.chans, Access: set.access,
		ToolGrants: grants, Streaming: set.streaming, Session: sessionSettings(next),
		Approvals: approvalSettings(next), Media: mediaSettings(next), Secrets: secrets, Timer: timerSettings(next)}
	b.accounts = accounts
	return b, nil
}

// touches reports whether a change is in one of the sections.
func touches(changes []configs.Change, sections ...string) bool {
	for _, c := range changes {
		for _, s := range sections {
			if c.Key == s || strings.HasPrefix(c.Key, s+".") {
				return true
			}
		}
	}
	return false
}

// approvalSettings maps tools.exec's approvals.
func approvalSettings(cfg *configs.Config) actors.ApprovalSettings {
	return actors.ApprovalSettings{Mode: cfg.Tools.Exec.Approvals,
		Timeout: time.Duration(cfg.Tools.Exec.ApprovalTimeoutSeconds) * time.Second}
}

// gate is the cluster's gate for the channels' inbound loops, nil on one node (an interface
// holding a nil *workGate would not be).
func (l *reloader) gate() channels.Gate {
	if l.rt.gate == nil {
		return nil
	}
	return l.rt.gate
}
