package actors

import (
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// isOwner reports whether in comes from the owner (access.Rules.IsOwner). A System event is
// the owner's only when its Standing says so (messages.Standing): a cron job, heartbeat or
// greeting of the owner's. A System event raised by a run counts as the owner's here, as it
// always has (its Standing records that run's tools, not who started it); its tools are
// bounded by that run's in toolPolicy, so this decides only whether exec asks for approval.
func (s *Session) isOwner(in messages.Inbound) bool {
	if in.System {
		return in.Standing != nil && (in.Standing.Caller == messages.CallerOwner || in.Standing.Raised())
	}
	return s.deps.Access[channels.ID(in.Channel, in.Account)].IsOwner(&in)
}

// toolPolicy is what a run answering ins may use: what every one of their senders may use
// (Deps.ToolGrants), so a message answered together with the owner's never borrows the
// owner's tools. A System event gets what its Standing allows, and a guest's tools without
// one: reef raising an event does not make it the owner's.
func (s *Session) toolPolicy(ins ...messages.Inbound) tools.Policy {
	p := s.agent.Policy
	for _, in := range ins {
		if in.System && in.Standing.Raised() { // raised by a run: at most that run's tools
			p = p.Intersect(standingPolicy(s.agent, in.Standing))
			continue
		}
		c := tools.Caller{Owner: s.isOwner(in), ChatID: in.ChatID, SenderID: in.SenderID,
			Group: in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread}
		p = p.Intersect(s.deps.ToolGrants[channels.ID(in.Channel, in.Account)].Resolve(s.agent.Policy, c))
	}
	return p
}

// ownerAnswered reports whether the run answering s.answering answers the owner: at least
// one person's message, and every person's message the owner's. It marks the session as the
// owner's (SessionInfo.OwnerSeen): cron jobs and heartbeats run there with the owner's tools,
// and the owner's direct chat that ran last is the agent's main session (heartbeat.go), so a
// guest's chat never gets them.
func (s *Session) ownerAnswered() bool {
	person := false
	for _, in := range s.answering {
		if in.System {
			continue
		}
		if !s.isOwner(in) {
			return false
		}
		person = true
	}
	return person
}
