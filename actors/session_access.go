package actors

import (
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// isOwner reports whether in comes from the owner (access.Rules.IsOwner).
func (s *Session) isOwner(in messages.Inbound) bool {
	return s.deps.Access[channels.ID(in.Channel, in.Account)].IsOwner(&in)
}

// toolPolicy is what a run answering ins may use: what every one of their senders may use
// (Deps.ToolGrants), so a message answered together with the owner's never borrows the
// owner's tools. Cron and heartbeat runs are the owner's.
func (s *Session) toolPolicy(ins ...messages.Inbound) tools.Policy {
	p := s.agent.Policy
	for _, in := range ins {
		if in.System && in.Standing != nil { // raised by a run: at most that run's tools
			p = p.Intersect(standingPolicy(s.agent, in.Standing))
			continue
		}
		c := tools.Caller{Owner: s.isOwner(in), ChatID: in.ChatID, SenderID: in.SenderID,
			Group: in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread}
		p = p.Intersect(s.deps.ToolGrants[channels.ID(in.Channel, in.Account)].Resolve(s.agent.Policy, c))
	}
	return p
}
