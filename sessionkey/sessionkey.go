// Package sessionkey names conversations: the key of the session an inbound message belongs
// to, by the agent and the DM scope. The Router routes by it, the store files transcripts
// under it, and the CLI uses it to find the terminal's session.
package sessionkey

import (
	"strings"

	"github.com/reefgw/reef/messages"
)

// For names the conversation an inbound message belongs to, by the DM scope:
//
//	main                      agent:<agent>:main                          (the owner's DMs share one session; see ForSender)
//	per-peer                  agent:<agent>:direct:<sender>
//	per-channel-peer          agent:<agent>:<channel>:direct:<sender>     (default)
//	per-account-channel-peer  agent:<agent>:<channel>:<account>:direct:<sender>
//
// Groups always get their own session, agent:<agent>:<channel>:group:<chat>, and threads or
// topics inside them agent:<agent>:<channel>:group:<chat>:thread:<thread>. A Stateless
// message gets a session of its own whatever the scope, agent:<agent>:<channel>:stateless:<chat>.
func For(agentID, dmScope string, in *messages.Inbound) string {
	return key(agentID, dmScope, in)
}

// ForSender is For with the owner rule of scope main: only the owner's direct chats share the
// main session. Everyone else's direct chats get their own (per-channel-peer), so a guest's
// words never enter the owner's context and the owner's runs (heartbeats with exec) never
// answer a guest's planted text.
func ForSender(agentID, dmScope string, in *messages.Inbound, owner bool) string {
	if dmScope == "main" && !owner {
		dmScope = "per-channel-peer"
	}
	return key(agentID, dmScope, in)
}

func key(agentID, dmScope string, in *messages.Inbound) string {
	if in.Stateless {
		return "agent:" + agentID + ":" + in.Channel + statelessPart + in.ChatID
	}
	var b strings.Builder
	b.WriteString("agent:")
	b.WriteString(agentID)
	if in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread {
		b.WriteString(":" + in.Channel)
		if dmScope == "per-account-channel-peer" && in.Account != "" {
			b.WriteString(":" + in.Account)
		}
		b.WriteString(":group:" + in.ChatID)
		if in.ThreadID != "" {
			b.WriteString(":thread:" + in.ThreadID)
		}
		return b.String()
	}
	peer := in.SenderID
	if peer == "" {
		peer = in.ChatID
	}
	switch dmScope {
	case "main":
		b.WriteString(":main")
	case "per-peer":
		b.WriteString(":direct:" + peer)
	case "per-account-channel-peer":
		b.WriteString(":" + in.Channel)
		if in.Account != "" {
			b.WriteString(":" + in.Account)
		}
		b.WriteString(":direct:" + peer)
	default:
		b.WriteString(":" + in.Channel + ":direct:" + peer)
	}
	return b.String()
}

const statelessPart = ":stateless:"

// IsStateless reports whether key is the session of a Stateless message: it lives for one run.
func IsStateless(key string) bool { return strings.Contains(key, statelessPart) }
