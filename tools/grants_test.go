package tools

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGuestPolicyResolve: who gets which tools, for every kind of caller and grant.
func TestGuestPolicyResolve(t *testing.T) {
	everything, err := NewPolicy(nil, nil, known)
	if err != nil {
		t.Fatal(err)
	}
	noExec, err := NewPolicy(nil, []string{"exec"}, known)
	if err != nil {
		t.Fatal(err)
	}
	safe := []string{"ls", "message", "read", "web_fetch"} // GuestTools this build (known) has
	all := everything.Allowed()
	rules := GuestRules{
		Channel:  Grant{Allow: []string{"plan"}},
		BySender: map[string]Grant{"trusted": {Allow: []string{"group:fs"}}, "muted": {Deny: []string{"*"}}},
		Groups: map[string]GroupGrant{
			"ops": {BySender: map[string]Grant{"42": {Allow: []string{"exec"}}, "trusted": {Deny: []string{"write"}}}},
			"web": {Grant: Grant{Deny: []string{"group:web"}}},
			"*":   {Grant: Grant{Deny: []string{"plan"}}},
		},
	}
	tests := []struct {
		name   string
		rules  *GuestRules // nil: no rules for the channel
		agent  Policy
		caller Caller
		want   []string
	}{
		{name: "owner gets the agent's tools", rules: &rules, agent: everything, caller: Caller{Owner: true, SenderID: "muted"}, want: all},
		{name: "owner under an agent deny", agent: noExec, caller: Caller{Owner: true},
			want: []string{"cron", "edit", "ls", "message", "plan", "read", "web_fetch", "write"}},
		{name: "guest without rules: the safe set", agent: everything, caller: Caller{SenderID: "7"}, want: safe},
		{name: "guest with empty rules: the safe set", rules: &GuestRules{}, agent: everything, caller: Caller{SenderID: "7"}, want: safe},
		{name: "group member without rules", agent: everything, caller: Caller{Group: true, ChatID: "g", SenderID: "7"}, want: safe},
		{name: "channel allow", rules: &rules, agent: everything, caller: Caller{SenderID: "7"},
			want: []string{"ls", "message", "plan", "read", "web_fetch"}},
		{name: "star group denies in every group", rules: &rules, agent: everything, caller: Caller{Group: true, ChatID: "g", SenderID: "7"}, want: safe},
		{name: "sender allow applies in DMs", rules: &rules, agent: everything, caller: Caller{SenderID: "trusted"},
			want: []string{"edit", "ls", "message", "plan", "read", "web_fetch", "write"}},
		{name: "a group's sender deny wins over the sender's allow", rules: &rules, agent: everything,
			caller: Caller{Group: true, ChatID: "ops", SenderID: "trusted"}, want: []string{"edit", "ls", "message", "read", "web_fetch"}},
		{name: "exec for one sender in one group", rules: &rules, agent: everything, caller: Caller{Group: true, ChatID: "ops", SenderID: "42"},
			want: []string{"exec", "ls", "message", "read", "web_fetch"}},
		{name: "not for that sender in a DM", rules: &rules, agent: everything, caller: Caller{SenderID: "42"},
			want: []string{"ls", "message", "plan", "read", "web_fetch"}},
		{name: "not for that sender in another group", rules: &rules, agent: everything, caller: Caller{Group: true, ChatID: "dev", SenderID: "42"}, want: safe},
		{name: "not for another sender in that group", rules: &rules, agent: everything, caller: Caller{Group: true, ChatID: "ops", SenderID: "7"}, want: safe},
		{name: "a group id alone is not a DM with that id", rules: &rules, agent: everything, caller: Caller{ChatID: "ops", SenderID: "7"},
			want: []string{"ls", "message", "plan", "read", "web_fetch"}},
		{name: "the agent's deny wins over a grant", rules: &rules, agent: noExec, caller: Caller{Group: true, ChatID: "ops", SenderID: "42"}, want: safe},
		{name: "group deny of a safe tool", rules: &rules, agent: everything, caller: Caller{Group: true, ChatID: "web", SenderID: "7"},
			want: []string{"ls", "message", "read"}},
		{name: "deny star takes everything", rules: &rules, agent: everything, caller: Caller{SenderID: "muted"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g *GuestPolicy
			if tt.rules != nil {
				var err error
				if g, err = NewGuestPolicy(*tt.rules, known); err != nil {
					t.Fatal(err)
				}
			}
			got := g.Resolve(tt.agent, tt.caller).Allowed()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGuestToolsHoldNoOwnerTool: the default guest set and the owner's tools do not overlap,
// and a guest without grants is offered none of the owner's tools.
func TestGuestToolsHoldNoOwnerTool(t *testing.T) {
	for _, n := range GuestTools {
		if IsOwnerTool(n) {
			t.Errorf("%s is both a guest tool and an owner tool", n)
		}
	}
	agent, err := NewPolicy(nil, nil, append(known, OwnerTools...))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range (*GuestPolicy)(nil).Resolve(agent, Caller{Group: true, ChatID: "g", SenderID: "7"}).Allowed() {
		if IsOwnerTool(n) {
			t.Errorf("a guest is offered %s", n)
		}
	}
}

func TestNewGuestPolicyErrors(t *testing.T) {
	tests := []struct {
		rules GuestRules
		err   string
	}{
		{GuestRules{Channel: Grant{Allow: []string{"rm"}}}, `tools: tools: policy: allow list: unknown tool "rm"`},
		{GuestRules{BySender: map[string]Grant{"42": {Deny: []string{"group:nope"}}}}, `toolsBySender.42: tools: policy: deny list: unknown group "group:nope"`},
		{GuestRules{Groups: map[string]GroupGrant{"g": {Grant: Grant{Allow: []string{"shell"}}}}}, `groupTools.g: tools: policy: allow list: unknown tool "shell"`},
		{GuestRules{Groups: map[string]GroupGrant{"g": {BySender: map[string]Grant{"42": {Allow: []string{"sudo"}}}}}},
			`groupTools.g.bySender.42: tools: policy: allow list: unknown tool "sudo"`},
	}
	for _, tt := range tests {
		if _, err := NewGuestPolicy(tt.rules, known); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("error = %v, want it to contain %q", err, tt.err)
		}
	}
}

func TestRefusalNamesTheFix(t *testing.T) {
	msg := Refusal("exec", "telegram", "42")
	for _, want := range []string{"exec is owner-only", "was not run", `add "42" to channels.telegram.allowFrom`, "channels.telegram.toolsBySender.42.allow"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	if msg := Refusal("read", "telegram", "42"); !strings.Contains(msg, "read is not available in this chat") ||
		strings.Contains(msg, "owner-only") || !strings.Contains(msg, "channels.telegram") {
		t.Errorf("refusal of a denied guest tool: %q", msg)
	}
}

// TestGuestsGetNoMemoryTools: memory_search and memory_get bring the owner's private notes
// into a chat, so guests get them only by a grant.
func TestGuestsGetNoMemoryTools(t *testing.T) {
	names := append([]string{"memory_search", "memory_get"}, known...)
	agent, err := NewPolicy(nil, nil, names)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGuestPolicy(GuestRules{BySender: map[string]Grant{"friend": {Allow: []string{"group:memory"}}}}, names)
	if err != nil {
		t.Fatal(err)
	}
	if p := g.Resolve(agent, Caller{SenderID: "stranger"}); p.Allows("memory_search") || p.Allows("memory_get") {
		t.Errorf("a guest gets %v", p.Allowed())
	}
	if p := g.Resolve(agent, Caller{SenderID: "friend"}); !p.Allows("memory_search") || !p.Allows("memory_get") {
		t.Errorf("a granted guest gets %v", p.Allowed())
	}
	if !strings.Contains(Refusal("memory_search", "telegram", "7"), "owner-only") {
		t.Error("the refusal does not say memory_search is owner-only")
	}
}
