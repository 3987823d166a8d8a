package routing_test

import (
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/routing"
)

func TestAgent(t *testing.T) {
	table := routing.New([]routing.Binding{
		{AgentID: "chan", Channel: "discord"},
		{AgentID: "work", Channel: "telegram", Account: "work"},
		{AgentID: "home", Channel: "telegram", Account: "default"},
		{AgentID: "boss", Channel: "telegram", PeerKind: "direct", PeerID: "7"},
		{AgentID: "team", Channel: "discord", PeerKind: "channel", PeerID: "c1"},
		{AgentID: "late", Channel: "discord", PeerKind: "group", PeerID: "c1"}, // shadowed by team
	})
	dm := func(ch, acc, sender string) *messages.Inbound {
		return &messages.Inbound{Channel: ch, Account: acc, ChatType: messages.ChatDirect, ChatID: sender, SenderID: sender}
	}
	group := func(ch, acc, chat string, typ messages.ChatType) *messages.Inbound {
		return &messages.Inbound{Channel: ch, Account: acc, ChatType: typ, ChatID: chat, SenderID: "9"}
	}
	tests := []struct {
		name string
		in   *messages.Inbound
		want string
	}{
		{"account work", dm("telegram", "work", "1"), "work"},
		{"default account", dm("telegram", "", "1"), "home"},
		{"peer beats account", dm("telegram", "work", "7"), "boss"},
		{"peer kind direct does not match a group with that id", group("telegram", "", "7", messages.ChatGroup), "home"},
		{"channel binding", dm("discord", "", "5"), "chan"},
		{"discord channel by id, first among equals", group("discord", "", "c1", messages.ChatGroup), "team"},
		{"thread in that channel", group("discord", "", "c1", messages.ChatThread), "team"},
		{"unbound channel", dm("feishu", "", "1"), ""},
		{"terminal", dm("terminal", "", "owner"), ""},
	}
	for _, tt := range tests {
		if got := table.Agent(tt.in); got != tt.want {
			t.Errorf("%s: Agent = %q, want %q", tt.name, got, tt.want)
		}
	}
	var none *routing.Table
	if got := none.Agent(dm("telegram", "", "1")); got != "" {
		t.Errorf("nil table: Agent = %q, want the default agent", got)
	}
}
