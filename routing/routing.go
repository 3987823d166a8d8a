// Package routing picks the agent that answers a chat, by the bindings of the configuration
// (reef.yaml's bindings): the most specific binding that matches wins (a peer over an
// account over a whole channel, the first among equals), and a chat no binding matches goes
// to the default agent.
package routing

import "github.com/reefgw/reef/messages"

// DefaultAccount is how a binding names the account of a platform block's own keys; its
// messages carry the account "".
const DefaultAccount = "default"

// Binding sends the chats it matches to AgentID. Empty fields match anything.
type Binding struct {
	AgentID  string
	Channel  string // telegram, discord, feishu, terminal
	Account  string // an account name, DefaultAccount for the block's own
	PeerKind string // direct | group | channel; with PeerID
	PeerID   string // the sender (direct) or the chat (group, channel)
}

// Table is the bindings of a gateway, ordered most specific first. The zero value and nil
// route every chat to the default agent.
type Table struct{ byRank [3][]Binding }

// New returns the table of bs; their order breaks ties between equally specific bindings.
func New(bs []Binding) *Table {
	t := &Table{}
	for _, b := range bs {
		r := rank(b)
		t.byRank[r] = append(t.byRank[r], b)
	}
	return t
}

// rank is 0 for a peer binding, 1 for an account binding, 2 for a channel binding.
func rank(b Binding) int {
	switch {
	case b.PeerID != "":
		return 0
	case b.Account != "":
		return 1
	}
	return 2
}

// Agent returns the agent bound to in's chat, or "" for the default agent.
func (t *Table) Agent(in *messages.Inbound) string {
	if t == nil {
		return ""
	}
	for _, rank := range t.byRank {
		for _, b := range rank {
			if b.matches(in) {
				return b.AgentID
			}
		}
	}
	return ""
}

func (b Binding) matches(in *messages.Inbound) bool {
	if b.Channel != "" && b.Channel != in.Channel {
		return false
	}
	if b.Account != "" && b.Account != accountName(in.Account) {
		return false
	}
	if b.PeerID == "" {
		return true
	}
	group := in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread
	switch b.PeerKind {
	case "direct":
		return !group && (in.SenderID == b.PeerID || in.SenderID == "" && in.ChatID == b.PeerID)
	case "group", "channel":
		return group && in.ChatID == b.PeerID
	}
	return false
}

func accountName(account string) string {
	if account == "" {
		return DefaultAccount
	}
	return account
}
