package actors

import (
	"context"
	"errors"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
)

// DecideApproval decides a waiting exec request for the owner from outside a chat (`reef
// security approvals approve|deny`): decision is access.DecisionApproved, DecisionAlways or
// DecisionDenied. It returns the text a chat would have answered.
func (rt *Runtime) DecideApproval(ctx context.Context, id, decision string) (string, error) {
	switch decision {
	case access.DecisionApproved, access.DecisionAlways, access.DecisionDenied:
	default:
		return "", errors.New("actors: decide approval: unknown decision " + decision)
	}
	reply := make(chan approvalAnswer, 1)
	rt.system.Root.Send(approvalsPID(rt.gateway), &approvalDecide{id: id, decision: decision, by: "cli",
		in: messages.Inbound{Channel: "cli"}, reply: reply})
	return awaitAnswer(ctx, reply)
}

// RevokeApprovalPrefix removes an allow-always prefix while reef runs.
func (rt *Runtime) RevokeApprovalPrefix(ctx context.Context, prefix string) (string, error) {
	reply := make(chan approvalAnswer, 1)
	rt.system.Root.Send(approvalsPID(rt.gateway), &approvalRevoke{prefix: prefix, in: messages.Inbound{Channel: "cli"}, reply: reply})
	return awaitAnswer(ctx, reply)
}

func awaitAnswer(ctx context.Context, reply <-chan approvalAnswer) (string, error) {
	select {
	case ans := <-reply:
		return ans.text, ans.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
