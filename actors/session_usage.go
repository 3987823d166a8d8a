package actors

import (
	"time"

	"github.com/reefgw/reef/usage"
)

// usageKey is the token ledger's row a run finishing now adds to (package usage): the day in
// the agent's time zone, the agent, the session's model and its channel.
func (s *Session) usageKey(now time.Time) usage.Key {
	model := s.agent.Model
	if m, err := s.agent.model(s.info.Model); err == nil {
		model = m.Label
	}
	return usage.Key{Day: s.budgetDay(now), Agent: s.agent.ID, Model: model, Channel: s.info.Channel}
}
