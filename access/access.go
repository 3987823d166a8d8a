// Package access decides who may do what: which inbound messages reach an agent (the DM
// policy, allowlists, groups and mentions), the pairing of unknown senders with the owner's
// approval, and who counts as the owner. The Connector enforces the rules before a message
// is stored, so an unknown sender never creates a session or an LLM call; the Session asks
// them who may use commands and owner-only tools.
package access

import (
	"slices"

	"github.com/reefgw/reef/messages"
)

// APIChannel is the channel of the OpenAI-compatible API (internal/openaiapi). Its callers
// hold the gateway token, so, like the terminal, everyone on it is the owner.
const APIChannel = "openai"

// WebChatChannel is the web UI's chat (channels/webchat). Its every conversation is posted
// by whoever holds the gateway token, so, like the API, everyone on it is the owner.
const WebChatChannel = "webchat"

// Rules say who may reach the agents through one channel. A channel without rules (nil:
// the terminal) admits everyone, and makes no one the owner but the terminal.
type Rules struct {
	DMPolicy       string   // pairing | allowlist | open | disabled
	AllowFrom      []string // sender ids allowed in direct messages; "*" = anyone
	Groups         []string // group ids where the bot answers; "*" = every group
	RequireMention bool     // in groups, only messages that mention or reply to the bot
}

// Verdict is what the Connector does with an inbound message.
type Verdict int

const (
	Admit  Verdict = iota // it reaches the agent
	Ignore                // it is acknowledged and dropped, unanswered
	Pair                  // unknown sender under the pairing policy: send a pairing code
)

// Admission decides whether in may reach an agent. It calls approved (the stored pairing
// approvals, a read of the database) only when the configured rules do not decide.
func (r *Rules) Admission(in *messages.Inbound, approved func() (bool, error)) (Verdict, error) {
	if r == nil {
		return Admit, nil
	}
	if in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread {
		if !slices.Contains(r.Groups, "*") && !slices.Contains(r.Groups, in.ChatID) {
			return Ignore, nil
		}
		if r.RequireMention && !in.Mentioned {
			return Ignore, nil
		}
		return Admit, nil
	}
	if r.DMPolicy == "disabled" {
		return Ignore, nil
	}
	if slices.Contains(r.AllowFrom, "*") || slices.Contains(r.AllowFrom, in.SenderID) {
		return Admit, nil
	}
	if ok, err := approved(); err != nil || ok {
		return Admit, err
	}
	if r.DMPolicy == "pairing" {
		return Pair, nil
	}
	return Ignore, nil
}

// IsOwner reports whether in comes from the owner: the terminal, the API (APIChannel), the
// web chat (WebChatChannel), or a
// direct message from a sender the channel's AllowFrom names explicitly ("*" makes no one the
// owner). A system event is never the owner by itself: its rights are in its Standing
// (messages.Standing), which the Session reads; without one it is a guest's.
func (r *Rules) IsOwner(in *messages.Inbound) bool {
	if in.System || in.Guest { // an API key's request is a guest's (messages.Inbound.Guest)
		return false
	}
	if in.Channel == "terminal" || in.Channel == APIChannel || in.Channel == WebChatChannel {
		return true
	}
	if r == nil || in.ChatType != messages.ChatDirect {
		return false
	}
	return slices.Contains(r.AllowFrom, in.SenderID)
}

// MayCommand reports whether the sender of in may use commands (/stop, /new, ...): anyone
// in a direct chat or on the terminal, in a group only a sender AllowFrom names. System
// events never run commands.
func (r *Rules) MayCommand(in *messages.Inbound) bool {
	if in.System {
		return false
	}
	if in.Channel == "terminal" || in.ChatType == messages.ChatDirect || in.ChatType == "" {
		return true
	}
	return r != nil && slices.Contains(r.AllowFrom, in.SenderID)
}

// MayApprove reports whether the sender of in may decide exec approvals: the terminal, the
// web chat, or a sender the channel's AllowFrom names explicitly, in any chat. System events
// never do.
func (r *Rules) MayApprove(in *messages.Inbound) bool {
	if in.System {
		return false
	}
	if in.Channel == "terminal" || in.Channel == WebChatChannel {
		return true
	}
	return r != nil && slices.Contains(r.AllowFrom, in.SenderID)
}
