package access

import (
	"errors"
	"testing"

	"github.com/reefgw/reef/messages"
)

func TestAdmission(t *testing.T) {
	dm := func(sender string) *messages.Inbound {
		return &messages.Inbound{ChatID: sender, SenderID: sender, ChatType: messages.ChatDirect}
	}
	group := func(chat string, mentioned bool) *messages.Inbound {
		return &messages.Inbound{ChatID: chat, SenderID: "anyone", ChatType: messages.ChatGroup, Mentioned: mentioned}
	}
	thread := &messages.Inbound{ChatID: "team", ThreadID: "t1", SenderID: "anyone", ChatType: messages.ChatThread}
	pairing := &Rules{DMPolicy: "pairing", AllowFrom: []string{"owner"}}
	allowlist := &Rules{DMPolicy: "allowlist", AllowFrom: []string{"friend"}, Groups: []string{"team"}, RequireMention: true}
	tests := []struct {
		name     string
		rules    *Rules
		in       *messages.Inbound
		approved bool
		want     Verdict
		asked    bool // whether the stored approvals were read
	}{
		{"no rules admit", nil, dm("stranger"), false, Admit, false},
		{"allowFrom admits", pairing, dm("owner"), false, Admit, false},
		{"an unknown sender is asked to pair", pairing, dm("stranger"), false, Pair, true},
		{"an approved sender is admitted", pairing, dm("stranger"), true, Admit, true},
		{"allowlist ignores a stranger", allowlist, dm("stranger"), false, Ignore, true},
		{"allowlist admits an approved sender", allowlist, dm("stranger"), true, Admit, true},
		{"open with a wildcard admits anyone", &Rules{DMPolicy: "open", AllowFrom: []string{"*"}}, dm("x"), false, Admit, false},
		{"disabled ignores even allowFrom", &Rules{DMPolicy: "disabled", AllowFrom: []string{"owner"}}, dm("owner"), true, Ignore, false},
		{"a group not listed is ignored", allowlist, group("other", true), true, Ignore, false},
		{"a listed group without a mention is ignored", allowlist, group("team", false), false, Ignore, false},
		{"a listed group with a mention is admitted", allowlist, group("team", true), false, Admit, false},
		{"a thread follows its group", allowlist, thread, false, Ignore, false},
		{"every group, no mention needed", &Rules{Groups: []string{"*"}}, group("any", false), false, Admit, false},
		{"no groups: groups are ignored", pairing, group("team", true), true, Ignore, false},
	}
	for _, tt := range tests {
		asked := false
		got, err := tt.rules.Admission(tt.in, func() (bool, error) { asked = true; return tt.approved, nil })
		if err != nil || got != tt.want || asked != tt.asked {
			t.Errorf("%s: got %v (approvals read: %v, err %v), want %v (read: %v)", tt.name, got, asked, err, tt.want, tt.asked)
		}
	}
}

func TestAdmissionReadError(t *testing.T) {
	boom := errors.New("disk")
	_, err := (&Rules{DMPolicy: "pairing"}).Admission(&messages.Inbound{SenderID: "x", ChatType: messages.ChatDirect},
		func() (bool, error) { return false, boom })
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the read error", err)
	}
}

func TestOwnerAndCommands(t *testing.T) {
	rules := &Rules{DMPolicy: "pairing", AllowFrom: []string{"owner"}}
	wildcard := &Rules{DMPolicy: "open", AllowFrom: []string{"*"}}
	tests := []struct {
		name              string
		rules             *Rules
		in                messages.Inbound
		owner, mayCommand bool
	}{
		{"terminal", nil, messages.Inbound{Channel: "terminal", ChatType: messages.ChatDirect}, true, true},
		{"system event", rules, messages.Inbound{Channel: "telegram", System: true}, false, false},
		{"system event on the terminal", rules, messages.Inbound{Channel: "terminal", System: true}, false, false},
		{"allowFrom in a DM", rules, messages.Inbound{Channel: "telegram", SenderID: "owner", ChatType: messages.ChatDirect}, true, true},
		{"allowFrom in a group", rules, messages.Inbound{Channel: "telegram", SenderID: "owner", ChatType: messages.ChatGroup}, false, true},
		{"paired guest in a DM", rules, messages.Inbound{Channel: "telegram", SenderID: "guest", ChatType: messages.ChatDirect}, false, true},
		{"guest in a group", rules, messages.Inbound{Channel: "telegram", SenderID: "guest", ChatType: messages.ChatGroup}, false, false},
		{"guest in a thread", rules, messages.Inbound{Channel: "telegram", SenderID: "guest", ChatType: messages.ChatThread}, false, false},
		{"a wildcard makes no owner", wildcard, messages.Inbound{Channel: "telegram", SenderID: "x", ChatType: messages.ChatDirect}, false, true},
		{"no rules, not the terminal: DM", nil, messages.Inbound{Channel: "fake", SenderID: "x", ChatType: messages.ChatDirect}, false, true},
		{"no rules: group", nil, messages.Inbound{Channel: "fake", SenderID: "x", ChatType: messages.ChatGroup}, false, false},
		// Every WebChat conversation (its chat id is its sender) is the token holder's.
		{"web chat, any conversation", wildcard, messages.Inbound{Channel: WebChatChannel, SenderID: "c0123", ChatType: messages.ChatDirect}, true, true},
		{"web chat, system event", wildcard, messages.Inbound{Channel: WebChatChannel, SenderID: "c0123", System: true}, false, false},
		{"chat type unknown", rules, messages.Inbound{Channel: "telegram", SenderID: "guest"}, false, true},
	}
	for _, tt := range tests {
		if got := tt.rules.IsOwner(&tt.in); got != tt.owner {
			t.Errorf("%s: IsOwner = %v, want %v", tt.name, got, tt.owner)
		}
		if got := tt.rules.MayCommand(&tt.in); got != tt.mayCommand {
			t.Errorf("%s: MayCommand = %v, want %v", tt.name, got, tt.mayCommand)
		}
	}
}

func TestWebChatMayApprove(t *testing.T) {
	rules := &Rules{DMPolicy: "pairing", AllowFrom: []string{"owner"}}
	for _, tt := range []struct {
		in   messages.Inbound
		want bool
	}{
		{messages.Inbound{Channel: "terminal"}, true},
		{messages.Inbound{Channel: WebChatChannel, SenderID: "c0123", ChatType: messages.ChatDirect}, true},
		{messages.Inbound{Channel: WebChatChannel, SenderID: "c0123", System: true}, false},
		{messages.Inbound{Channel: "telegram", SenderID: "owner", ChatType: messages.ChatGroup}, true},
		{messages.Inbound{Channel: "telegram", SenderID: "guest", ChatType: messages.ChatDirect}, false},
	} {
		if got := rules.MayApprove(&tt.in); got != tt.want {
			t.Errorf("MayApprove(%+v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
