package actors

import (
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
)

// In cluster mode some inbox entries carry something to a waiter on the node that runs the
// session rather than a message to run: an exec approval's decided on another node
// (messages.Inbound.Approval, approvals_cluster.go) for the call that waits for it, the
// reply of a session on another node to a sessions_send that waits (replySource,
// subagent_send.go), and a Runtime.Cancel given on another node (cancel_cluster.go). The Session hands them over and removes the entry, silently.

// takeHandover hands in over when it is such an entry and reports whether it was.
func (s *Session) takeHandover(ctx actor.Context, in *messages.Inbound) bool {
	if !in.System {
		return false
	}
	switch {
	case in.Approval != nil:
		if s.deps.approvals != nil {
			ctx.Send(s.deps.approvals, &approvalSettle{key: s.key, d: *in.Approval})
		}
	case strings.HasPrefix(in.Source, replySource):
		ctx.Send(s.router, &interReply{id: strings.TrimPrefix(in.Source, replySource), text: in.Text})
	case in.Source == cancelSource: // Runtime.Cancel on another node (cancel_cluster.go)
		if s.turn != nil && s.deps.now().Sub(in.Time) < cancelFresh {
			ctx.Send(s.turn, &cancelTurn{})
		}
	default:
		return false
	}
	silent := *in
	silent.Channel = "" // recorded, not announced
	s.answer(ctx, silent, "", nil)
	return true
}
