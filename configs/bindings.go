package configs

import (
	"fmt"
	"slices"
	"strings"
)

var peerKinds = []string{"direct", "group", "channel"}

// validateBindings checks that every binding names a configured agent and can match a chat:
// its channel runs, its account exists, and no earlier binding with the same match takes
// every chat it would get.
func (c *Config) validateBindings(v *validator) {
	agents := make([]string, 0, len(c.Agents))
	for _, a := range c.Agents {
		agents = append(agents, a.ID)
	}
	accounts := map[string][]string{} // channel → account names it runs
	for _, a := range c.Channels.Accounts() {
		accounts[a.Channel] = append(accounts[a.Channel], a.Name())
	}
	accounts["terminal"] = nil // reef chat always has it
	accounts["webchat"] = nil  // the gateway's web listener has it
	first := map[string]int{}  // a match, spelled out → the binding that has it first
	for i, b := range c.Bindings {
		path := fmt.Sprintf("bindings[%d]", i)
		if !slices.Contains(agents, b.AgentID) {
			msg := fmt.Sprintf("%s.agentId: %q is not an agent", path, b.AgentID)
			if s := suggest(b.AgentID, agents); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += ": use one of " + strings.Join(agents, ", ")
			}
			v.addf("%s", msg)
		}
		if !c.validateMatch(v, path+".match", b.Match, accounts) {
			continue
		}
		key := matchKey(b.Match)
		if j, dup := first[key]; dup {
			v.addf("%s.match: the same as bindings[%d].match, which comes first: this binding can never match; remove one", path, j)
			continue
		}
		first[key] = i
	}
}

// validateMatch reports whether m can select a chat, adding a problem when it cannot.
func (c *Config) validateMatch(v *validator, path string, m BindingMatch, accounts map[string][]string) bool {
	if m.Channel == "" {
		v.addf("%s.channel: required: use one of %s", path, strings.Join(channelNames, ", "))
		return false
	}
	if !slices.Contains(channelNames, m.Channel) {
		msg := fmt.Sprintf("%s.channel: %q is not a channel", path, m.Channel)
		if s := suggest(m.Channel, channelNames); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		v.addf("%s: use one of %s", msg, strings.Join(channelNames, ", "))
		return false
	}
	running, ok := accounts[m.Channel]
	if !ok {
		v.addf("%s.channel: %s is not configured, so this binding can never match: add channels.%s or remove the binding", path, m.Channel, m.Channel)
		return false
	}
	good := true
	if m.AccountID != "" {
		switch {
		case m.Channel == "terminal":
			v.addf("%s.accountId: the terminal has no accounts: remove accountId", path)
			good = false
		case !slices.Contains(running, m.AccountID):
			msg := fmt.Sprintf("%s.accountId: %q is not an account of channels.%s, so this binding can never match", path, m.AccountID, m.Channel)
			if s := suggest(m.AccountID, running); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			v.addf("%s: its accounts are %s", msg, strings.Join(running, ", "))
			good = false
		}
	}
	if p := m.Peer; p != nil {
		before := len(v.problems)
		v.oneOf(path+".peer.kind", p.Kind, peerKinds)
		if p.ID == "" {
			v.addf("%s.peer.id: required: the sender's id (kind direct) or the chat's id (group, channel)", path)
		}
		if m.Channel == "terminal" && p.Kind != "direct" {
			v.addf("%s.peer.kind: the terminal has no groups or channels: this binding can never match", path)
		}
		good = good && len(v.problems) == before
	}
	return good
}

// matchKey spells out a match so that two bindings with the same one compare equal.
func matchKey(m BindingMatch) string {
	key := m.Channel + "\x00" + m.AccountID
	if m.Peer != nil {
		kind := m.Peer.Kind
		if kind == "channel" {
			kind = "group" // one chat id: a group and a channel match the same chats
		}
		key += "\x00" + kind + "\x00" + m.Peer.ID
	}
	return key
}
