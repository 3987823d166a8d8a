package actors

import (
	"errors"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// The message tool's edit and delete change a message reef sent in the conversation the run
// answers; its send reports the platform id of what it sent. Both go through the chat's
// Connector, in the chat's order (connector_edit.go), so "send, then edit" edits the message
// just sent, and the Connector checks that the message is one it sent there.

// changeMessage asks the chat's Connector to edit or delete a message; it answers msg.reply.
func (s *Session) changeMessage(ctx actor.Context, last messages.Inbound, msg *toolMessage) {
	req := msg.req
	action := "delete"
	if req.Edit {
		action = "edit"
	}
	if t := strings.TrimSpace(req.Target); t != "" && t != last.ChatID && !isCurrent(t, s.key) {
		msg.reply <- fmt.Errorf("%s acts on messages of this conversation only", action)
		return
	}
	pid := s.deps.connector(channels.ID(last.Channel, last.Account))
	if pid == nil {
		msg.reply <- errors.New("there is no conversation here whose messages could be changed")
		return
	}
	op := &messageOp{kind: opDelete, chatID: last.ChatID, messageID: strings.TrimSpace(req.MessageID),
		reply: msg.reply, ids: msg.ids}
	if req.Edit {
		op.kind, op.text = opEdit, s.deps.redactor().apply(req.Text)
	}
	ctx.Send(pid, op)
}

// askSentIDs asks the Connector for the platform ids of out once it delivered it.
func (s *Session) askSentIDs(ctx actor.Context, out *messages.Outbound, ids chan sentResult) {
	if pid := s.deps.connector(channels.ID(out.Channel, out.Account)); pid != nil {
		ctx.Send(pid, &messageOp{kind: opIDs, chatID: out.ChatID, out: outKey(out), ids: ids})
	}
}
