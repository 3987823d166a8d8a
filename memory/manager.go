package memory

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
)

// Manager holds the memory index of each agent. It is read-only after NewManager and safe
// for concurrent use.
type Manager struct {
	byAgent map[string]*Index
	log     zerolog.Logger
}

// NewManager builds an index per agent config over store. It reads and starts nothing.
func NewManager(store persistence.Store, log zerolog.Logger, agents ...Config) *Manager {
	m := &Manager{byAgent: map[string]*Index{}, log: log}
	for _, c := range agents {
		m.byAgent[c.AgentID] = New(c, store, log)
	}
	return m
}

// Index returns an agent's index; false when memory is off for the agent or m is nil.
func (m *Manager) Index(agentID string) (*Index, bool) {
	if m == nil {
		return nil, false
	}
	x, ok := m.byAgent[agentID]
	return x, ok
}

// Touch re-indexes a file an agent's tools just wrote, if it is a memory file. A failure is
// logged: the next search's sync tries again.
func (m *Manager) Touch(ctx context.Context, agentID, rel string) {
	x, ok := m.Index(agentID)
	if !ok || !IsMemoryPath(rel) {
		return
	}
	if err := x.Touch(ctx, rel); err != nil {
		m.log.Warn().Err(err).Str("agent", agentID).Str("path", rel).Msg("memory: index after write")
	}
}

// Close releases the indexes' file watchers.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, x := range m.byAgent {
		errs = append(errs, x.Close())
	}
	return errors.Join(errs...)
}
