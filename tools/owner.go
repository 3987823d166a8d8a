package tools

import "fmt"

// OwnerOnly is the refusal of an owner-only tool to a caller who is not the owner. The owner
// is the terminal and, in direct messages, the senders a channel's allowFrom names one by one
// ("*" lets everyone talk but makes nobody the owner); it names the id to add.
func OwnerOnly(tool string, env Env) string {
	msg := fmt.Sprintf("%s is owner-only, and this chat is not the owner's. The owner is the terminal (reef chat) "+
		"and, in direct messages, the senders a channel's allowFrom names one by one (\"*\" makes nobody the owner).", tool)
	if env.Channel != "" && env.SenderID != "" {
		msg += fmt.Sprintf(" To make this sender the owner, add %q to channels.%s.allowFrom in reef.yaml.", env.SenderID, env.Channel)
	}
	return msg
}
