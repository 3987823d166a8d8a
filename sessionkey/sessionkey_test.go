package sessionkey

import (
	"testing"

	"github.com/reefgw/reef/messages"
)

func TestFor(t *testing.T) {
	dm := &messages.Inbound{Channel: "telegram", Account: "work", ChatID: "c42", SenderID: "42", ChatType: messages.ChatDirect}
	noSender := &messages.Inbound{Channel: "webchat", ChatID: "tab1", ChatType: messages.ChatDirect}
	group := &messages.Inbound{Channel: "discord", Account: "work", ChatID: "g1", SenderID: "42", ChatType: messages.ChatGroup}
	thread := &messages.Inbound{Channel: "discord", ChatID: "g1", ThreadID: "t9", SenderID: "42", ChatType: messages.ChatThread}
	stateless := &messages.Inbound{Channel: "openai", ChatID: "main/x1", SenderID: "api", ChatType: messages.ChatDirect, Stateless: true}
	tests := []struct {
		scope string
		in    *messages.Inbound
		want  string
	}{
		{"", dm, "agent:main:telegram:direct:42"}, // per-channel-peer is the default
		{"per-channel-peer", dm, "agent:main:telegram:direct:42"},
		{"main", dm, "agent:main:main"},
		{"per-peer", dm, "agent:main:direct:42"},
		{"per-account-channel-peer", dm, "agent:main:telegram:work:direct:42"},
		{"per-account-channel-peer", &messages.Inbound{Channel: "telegram", ChatID: "42", SenderID: "42"}, "agent:main:telegram:direct:42"},
		{"", noSender, "agent:main:webchat:direct:tab1"}, // no sender: the chat is the peer
		{"per-peer", noSender, "agent:main:direct:tab1"},
		// Groups get their own session whatever the scope; only the account scope adds the account.
		{"", group, "agent:main:discord:group:g1"},
		{"main", group, "agent:main:discord:group:g1"},
		{"per-peer", group, "agent:main:discord:group:g1"},
		{"per-account-channel-peer", group, "agent:main:discord:work:group:g1"},
		{"", thread, "agent:main:discord:group:g1:thread:t9"},
		{"per-account-channel-peer", thread, "agent:main:discord:group:g1:thread:t9"}, // no account
		{"main", stateless, "agent:main:openai:stateless:main/x1"},
		{"per-peer", stateless, "agent:main:openai:stateless:main/x1"},
	}
	for _, tt := range tests {
		if got := For("main", tt.scope, tt.in); got != tt.want {
			t.Errorf("For(main, %q, %+v) = %q, want %q", tt.scope, *tt.in, got, tt.want)
		}
	}
}

// With dmScope main only the owner's direct chats share the main session; a guest's get their
// own, as under per-channel-peer (#39).
func TestForSenderKeepsGuestsOutOfMain(t *testing.T) {
	dm := &messages.Inbound{Channel: "telegram", ChatID: "7", SenderID: "7", ChatType: messages.ChatDirect}
	if got := ForSender("main", "main", dm, true); got != "agent:main:main" {
		t.Errorf("the owner's DM: %q, want the main session", got)
	}
	if got := ForSender("main", "main", dm, false); got != "agent:main:telegram:direct:7" {
		t.Errorf("a guest's DM under dmScope main: %q, want its own session", got)
	}
	if got := ForSender("main", "per-peer", dm, false); got != "agent:main:direct:7" {
		t.Errorf("other scopes are unchanged: %q", got)
	}
}

func TestIsStateless(t *testing.T) {
	if !IsStateless("agent:main:openai:stateless:main/x1") || IsStateless("agent:main:openai:direct:stateless") {
		t.Error("IsStateless does not tell a stateless key from a session named stateless")
	}
}
