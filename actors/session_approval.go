package actors

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Exec approvals as a Session sees them: its run's calls that wait for the owner (shown in
// the chat and in /status), and the owner's commands /approve, /deny and /approvals, which
// the Approvals actor (approvals.go) carries out and answers.

// onApprovalNotice shows in the run's chat that a call waits for the owner (or no longer).
// When the owner is asked in this very chat (the terminal), the request says it already.
func (s *Session) onApprovalNotice(ctx actor.Context, msg *approvalNotice) {
	if msg.done {
		delete(s.approvals, msg.req.ID)
		return
	}
	if s.approvals == nil {
		s.approvals = map[string]string{}
	}
	s.approvals[msg.req.ID] = msg.req.Command
	if len(s.answering) == 0 || msg.reached == "the terminal" {
		return
	}
	last := s.answering[len(s.answering)-1]
	s.toConnector(ctx, &messages.Outbound{Channel: last.Channel, Account: last.Account, ChatID: last.ChatID,
		ThreadID: last.ThreadID, Text: waitingText(msg.req, msg.reached), SessionKey: s.key, Direct: true})
}

// approvalLine is /status's line on calls waiting for the owner ("" when none).
func (s *Session) approvalLine() string {
	if len(s.approvals) == 0 {
		return ""
	}
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(s.approvals)) {
		parts = append(parts, fmt.Sprintf("%s `%s`", id, s.approvals[id]))
	}
	return "Waiting for the owner to approve: " + strings.Join(parts, ", ")
}

// onApprovalCommand carries out /approve <id> [always], /deny <id> and /approvals [revoke
// <prefix>] for the owner; anyone else is refused.
func (s *Session) onApprovalCommand(ctx actor.Context, in messages.Inbound, cmd command) {
	if !s.deps.rules(in.Channel).MayApprove(&in) {
		s.answer(ctx, in, "Only the owner may approve or deny commands, or list them.", nil)
		return
	}
	if s.deps.approvals == nil {
		s.answer(ctx, in, "Approvals are not running.", nil)
		return
	}
	by := in.Channel + ":" + in.SenderID
	if in.Channel == "terminal" {
		by = "terminal"
	}
	var msg any
	switch {
	case cmd.name == "approvals" && len(cmd.args) > 1 && cmd.args[0] == "revoke":
		msg = &approvalRevoke{prefix: strings.Join(cmd.args[1:], " "), in: in, replyTo: ctx.Self()}
	case cmd.name == "approvals" && len(cmd.args) == 0:
		msg = &approvalList{in: in, replyTo: ctx.Self()}
	case cmd.name == "approvals":
		s.answer(ctx, in, "Usage: /approvals, or /approvals revoke <prefix>", nil)
		return
	case len(cmd.args) == 0 || len(cmd.args) > 2 || len(cmd.args) == 2 && (cmd.name == "deny" || cmd.args[1] != "always"):
		s.answer(ctx, in, "Usage: /approve <id>, /approve <id> always, /deny <id> (/approvals lists what waits)", nil)
		return
	case cmd.name == "deny":
		msg = &approvalDecide{id: cmd.args[0], decision: access.DecisionDenied, by: by, in: in, replyTo: ctx.Self()}
	case len(cmd.args) == 2:
		msg = &approvalDecide{id: cmd.args[0], decision: access.DecisionAlways, by: by, in: in, replyTo: ctx.Self()}
	default:
		msg = &approvalDecide{id: cmd.args[0], decision: access.DecisionApproved, by: by, in: in, replyTo: ctx.Self()}
	}
	s.writes++ // not idle until the answer is recorded (onApprovalAnswer)
	ctx.Send(s.deps.approvals, msg)
}

func (s *Session) onApprovalAnswer(ctx actor.Context, msg *approvalAnswer) {
	s.writes--
	s.answer(ctx, msg.in, msg.text, nil)
}

// loadAwaiting returns the calls of the session that wait for the owner's approval.
func loadAwaiting(r persistence.Reader, key string) (map[string]bool, error) {
	reqs, err := access.ExecRequests(r)
	out := map[string]bool{}
	for _, req := range reqs {
		if req.SessionKey == key {
			out[req.CallID] = true
		}
	}
	return out, err
}
