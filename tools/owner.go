package tools

import "fmt"

// Refusal is the error result of a call to a tool the agent has but the caller may not use
// (see GuestPolicy): it says who may, and what in reef.yaml would change that. The owner is
// the terminal and, in direct messages, the senders a channel's allowFrom names one by one
// ("*" lets everyone talk but makes nobody the owner).
func Refusal(tool, channel, senderID string) string {
	if !IsOwnerTool(tool) { // a tool guests get by default, taken away by a deny
		msg := fmt.Sprintf("%s is not available in this chat (reef.yaml denies it here); it was not run.", tool)
		if channel != "" {
			msg += fmt.Sprintf(" The denies are in channels.%s (tools, groupTools, toolsBySender).", channel)
		}
		return msg
	}
	msg := fmt.Sprintf("%s is owner-only here, and this chat is not the owner's; it was not run. The owner is the terminal (reef chat) "+
		"and, in direct messages, the senders a channel's allowFrom names one by one (\"*\" makes nobody the owner).", tool)
	if channel != "" && senderID != "" {
		msg += fmt.Sprintf(" To make this sender the owner, add %q to channels.%s.allowFrom in reef.yaml; "+
			"to let them use %s without being the owner, add it to channels.%s.toolsBySender.%s.allow.", senderID, channel, tool, channel, senderID)
	}
	return msg
}
