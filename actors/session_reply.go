package actors

import (
	"strings"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
)

// replyTarget is the message a run's reply to last quotes natively: the one a
// [[reply_to:<id>]] directive names when it is a message of last's chat, else last itself
// (as without directives, and with [[reply_to_current]]). An id the session cannot place in
// the chat (not one it answered lately, nor one the platform's id form ties to the chat) is
// ignored: on Feishu a reply to a message of another chat would be posted there.
func (s *Session) replyTarget(last messages.Inbound, r agent.Reply) string {
	id := strings.TrimSpace(r.ReplyTo)
	if id == "" || id == last.MessageID {
		return last.MessageID
	}
	for _, in := range s.answered {
		if in.MessageID == id && in.Channel == last.Channel && in.ChatID == last.ChatID {
			return id
		}
	}
	if inChat(last, id) {
		return id
	}
	s.log.Warn().Str("replyTo", id).Msg("session: [[reply_to]] names no message of this chat; replying to the last message")
	return last.MessageID
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
