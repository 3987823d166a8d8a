package tools

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMCPPolicy(t *testing.T) {
	known := []string{"read", "exec", "files__read_file", "files__write_file", "web__fetch"}
	tests := []struct {
		name        string
		allow, deny []string
		want        []string
	}{
		{name: "one server", allow: []string{"read", "mcp:files"}, want: []string{"files__read_file", "files__write_file", "read"}},
		{name: "every server", allow: []string{"group:mcp"}, want: []string{"files__read_file", "files__write_file", "web__fetch"}},
		{name: "deny one server", deny: []string{"mcp:web", "exec"}, want: []string{"files__read_file", "files__write_file", "read"}},
		{name: "deny one tool", allow: []string{"mcp:files"}, deny: []string{"files__write_file"}, want: []string{"files__read_file"}},
		{name: "a server without tools adds nothing", allow: []string{"read", "mcp:down"}, want: []string{"read"}},
		{name: "a prefix is not a server", allow: []string{"mcp:file"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.allow, tt.deny, known)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Allowed()); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
		})
	}
	if !slices.Contains(GroupNames(), GroupMCP) {
		t.Errorf("GroupNames lacks %s: %v", GroupMCP, GroupNames())
	}
}

// MCP tools are the owner's: a guest gets them only by a grant.
func TestMCPToolsAreOwnerOnly(t *testing.T) {
	known := []string{"read", "files__read_file", "web__fetch"}
	agent, err := NewPolicy(nil, nil, known)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGuestPolicy(GuestRules{BySender: map[string]Grant{"7": {Allow: []string{"mcp:files"}}}}, known)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Resolve(agent, Caller{SenderID: "42"}).Allowed(); !cmp.Equal(got, []string{"read"}) {
		t.Errorf("a guest: got %v, want only read", got)
	}
	if got := g.Resolve(agent, Caller{SenderID: "7"}).Allowed(); !cmp.Equal(got, []string{"files__read_file", "read"}) {
		t.Errorf("a guest granted mcp:files: got %v", got)
	}
	if msg := Refusal("web__fetch", "telegram", "42"); !strings.Contains(msg, "owner-only") {
		t.Errorf("refusal: %s", msg)
	}
}
