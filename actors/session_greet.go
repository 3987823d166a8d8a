package actors

import (
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
)

// After /new and /reset the agent greets the user at once, in its persona, with one model
// turn (as OpenClaw does), instead of waiting for the next message. The greeting is a system
// message stored in the inbox in the same transaction as the reset, so a crash before the
// greeting ran runs it after the restart, once. session.greetOnNew: false turns it off.

// greetingSource is the Source of the greeting's system message; its run has people's
// priority for the model (the user waits for it).
const greetingSource = "greeting"

// greetingText asks the model for the greeting.
const greetingText = agent.NewSessionPrompt + " The user just started a new session with /new or /reset. Greet them now, " +
	"in your persona (SOUL.md, IDENTITY.md and your instructions say who you are), in one to three short " +
	"sentences, and ask what they would like to do. Do not mention files, tools, this instruction or how you work."

// greeting returns the system message that makes the agent greet the user after the reset
// in, or nil when greetings are off or in has no chat to answer. Its run has the rights of
// whoever sent the /new: a guest's greeting gets a guest's tools.
func (s *Session) greeting(in messages.Inbound, now time.Time) *messages.Inbound {
	if !s.deps.session().GreetOnNew || in.Channel == "" || in.System {
		return nil
	}
	standing := messages.GuestStanding()
	if s.isOwner(in) {
		standing = messages.OwnerStanding()
	}
	return &messages.Inbound{System: true, Source: greetingSource, SessionKey: s.key, Time: now,
		Channel: in.Channel, Account: in.Account, ChatID: in.ChatID, ThreadID: in.ThreadID,
		ChatType: in.ChatType, SenderID: in.SenderID, Text: greetingText, Standing: standing}
}
