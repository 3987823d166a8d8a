package actors

import (
	"errors"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// replyTarget is the message a run's reply to last quotes natively: the one a
// [[reply_to:<id>]] directive names when it is a message of last's chat, else last itself
// (as without directives, and with [[reply_to_current]]). An id the session cannot place in
// the chat (not one it answered lately, nor one the platform's id form ties to the chat) is
// ignored: on Feishu a reply to a message of another chat would be posted there.
func (s *Session) replyTarget(last messages.Inbound, r agent.Reply) string {
	id := strings.TrimSpace(r.ReplyTo)
	if id == "" {
		return last.MessageID
	}
	if s.placed(last, id) {
		return id
	}
	s.log.Warn().Str("replyTo", id).Msg("session: [[reply_to]] names no message of this chat; replying to the last message")
	return last.MessageID
}

// placed reports whether the message id names a message of last's chat: last itself, one
// the session answered lately, or one the platform's id form ties to the chat.
func (s *Session) placed(last messages.Inbound, id string) bool {
	if id == last.MessageID {
		return true
	}
	for _, in := range s.answered {
		if in.MessageID == id && in.Channel == last.Channel && in.ChatID == last.ChatID {
			return true
		}
	}
	return inChat(last, id)
}

// react asks the chat's Connector to set the bot's reaction for the message tool; the
// Connector answers msg.reply.
func (s *Session) react(ctx actor.Context, last messages.Inbound, msg *toolMessage) {
	req := msg.req
	id := strings.TrimSpace(req.MessageID)
	switch {
	case req.Target != "" && req.Target != last.ChatID && !isCurrent(req.Target, s.key):
		msg.reply <- errors.New("reactions go to messages of this conversation only")
		return
	case id == "":
		id = last.MessageID
	case !s.placed(last, id):
		msg.reply <- fmt.Errorf("message %q is not one of this conversation's that reef knows", id)
		return
	}
	pid := s.deps.connector(channels.ID(last.Channel, last.Account))
	if pid == nil || id == "" {
		msg.reply <- fmt.Errorf("reactions are not supported on %s", last.Channel)
		return
	}
	ctx.Send(pid, &reactRequest{chatID: last.ChatID, messageID: id, emoji: req.Emoji, reply: msg.reply})
}

// maxAnswered bounds the messages a session remembers for [[reply_to:<id>]]. They live in
// memory only: after a restart an older id is checked like any other.
const maxAnswered = 64

// noteAnswered remembers the messages a run answers.
func (s *Session) noteAnswered(ins []messages.Inbound) {
	for _, in := range ins {
		if in.MessageID != "" && !in.System {
			s.answered = append(s.answered, messages.Inbound{Channel: in.Channel, ChatID: in.ChatID, MessageID: in.MessageID})
		}
	}
	if n := len(s.answered); n > maxAnswered {
		s.answered = append([]messages.Inbound(nil), s.answered[n-maxAnswered:]...)
	}
}

// inChat reports whether a message id the model wrote can only name a message of last's
// chat: on Telegram "<chat>:<n>" of the same chat, or a bare number (the chat is implied);
// on Discord a snowflake (the reply's reference carries the channel, and Discord refuses
// one from another channel).
func inChat(last messages.Inbound, id string) bool {
	switch last.Channel {
	case "telegram":
		chat, n, ok := strings.Cut(id, ":")
		if !ok {
			return digits(id)
		}
		return chat == last.ChatID && digits(n)
	case "discord":
		return digits(id)
	}
	return false
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// toolMessageOutbound addresses a message tool's send: to the run's own conversation (it
// takes the run's draft, and the final reply comes below it), or, for a target, to another
// chat of the same channel account as a direct message, which needs the rights of
// sessions_send (owner-only by default).
func (s *Session) toolMessageOutbound(last messages.Inbound, req tools.MessageRequest) (*messages.Outbound, error) {
	out := &messages.Outbound{Channel: last.Channel, Account: last.Account, ChatID: last.ChatID,
		ThreadID: last.ThreadID, SessionKey: s.key}
	target := strings.TrimSpace(req.Target)
	if isCurrent(target, s.key) {
		target = ""
	}
	if target != "" {
		chat, thread, err := targetChat(last, target)
		if err != nil {
			return nil, err
		}
		if chat != last.ChatID || thread != last.ThreadID {
			if !s.turnTools.Allows("sessions_send") {
				return nil, errors.New("sending to another chat is not allowed in this conversation (it needs the rights of sessions_send, the owner's by default)")
			}
			out.ChatID, out.ThreadID, out.Direct = chat, thread, true
			if req.ReplyTo != "" && inChat(messages.Inbound{Channel: last.Channel, ChatID: chat}, req.ReplyTo) {
				out.ReplyToID, out.Quote = req.ReplyTo, true
			}
			return out, nil
		}
	}
	switch {
	case req.ReplyTo != "":
		out.ReplyToID, out.Quote = s.replyTarget(last, agent.Reply{ReplyTo: req.ReplyTo}), true
	case req.Reply:
		out.ReplyToID, out.Quote = last.MessageID, true
	}
	return out, nil
}

// targetChat reads a message tool's target: a chat id of last's channel, or a session key
// of that channel whose chat id the key holds (a group or thread; a Telegram direct chat,
// whose id is the peer's).
func targetChat(last messages.Inbound, target string) (chat, thread string, err error) {
	if !strings.HasPrefix(target, "agent:") {
		return target, "", nil
	}
	parts := strings.Split(target, ":")
	for i := 2; i+1 < len(parts); i++ {
		switch parts[i] {
		case "group":
			if parts[2] != last.Channel {
				break
			}
			chat = parts[i+1]
			if i+3 < len(parts) && parts[i+2] == "thread" {
				thread = parts[i+3]
			}
			return chat, thread, nil
		case "direct":
			if parts[2] == last.Channel && last.Channel == "telegram" {
				return parts[i+1], "", nil
			}
		}
	}
	return "", "", fmt.Errorf("the session %q is not a chat of this %s account that the message tool can address; use sessions_send", target, last.Channel)
}

// isCurrent reports whether a message tool's target names the run's own conversation:
// "current" (OpenClaw's word for it) or the session's own key.
func isCurrent(target, key string) bool {
	return strings.EqualFold(target, "current") || target == key
}
