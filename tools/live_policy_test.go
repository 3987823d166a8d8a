package tools

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
)

// fakeSource is an MCP server whose tools a test adds while the registry is in use.
type fakeSource struct {
	name  string
	mu    sync.Mutex
	tools []Tool
	gen   uint64
}

func (s *fakeSource) Name() string { return s.name }

func (s *fakeSource) Tools() []Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

func (s *fakeSource) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

func (s *fakeSource) add(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		s.tools = append(s.tools, namedTool(s.name+MCPSeparator+n))
	}
	s.gen++
}

type namedTool string

func (n namedTool) Spec() messages.ToolSpec { return messages.ToolSpec{Name: string(n)} }
func (n namedTool) Run(context.Context, Call) (Result, error) {
	return Result{Content: string(n)}, nil
}

func specNames(specs []messages.ToolSpec) []string {
	out := []string{}
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// TestLivePolicy: a tool an MCP server adds while reef runs is offered by the rules a tool it
// had at start meets: allow and deny entries match it by name and pattern when asked, guests
// get it only by a grant that matches it, and a later Allows is what a call is checked by.
func TestLivePolicy(t *testing.T) {
	files := &fakeSource{name: "files"}
	files.add("read_file")
	down := &fakeSource{name: "down"} // not listed at start
	reg, err := NewRegistryWith([]Source{files, down}, namedTool("read"), namedTool("exec"))
	if err != nil {
		t.Fatal(err)
	}
	everything, err := reg.Policy(nil, []string{"files__secret_*", "mcp:down:admin*"})
	if err != nil {
		t.Fatal(err)
	}
	onlyFiles, err := reg.Policy([]string{"read", "mcp:files:read_*", "down__status"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	guests, err := NewGuestPolicy(GuestRules{BySender: map[string]Grant{"7": {Allow: []string{"mcp:files:read_*"}}}},
		[]string{"read", "exec", "files__*", "down__*"})
	if err != nil {
		t.Fatal(err)
	}
	gen := reg.Generation()
	wantSpecs := func(p Policy, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, specNames(reg.Specs(p))); diff != "" {
			t.Errorf("specs (-want +got):\n%s", diff)
		}
	}
	wantSpecs(everything, "exec", "files__read_file", "read")
	wantSpecs(onlyFiles, "files__read_file", "read")

	files.add("read_dir", "write_file", "secret_keys")
	down.add("status", "admin_reset")
	if reg.Generation() == gen {
		t.Errorf("the registry's generation did not move")
	}
	if _, ok := reg.Get("files__write_file"); !ok {
		t.Fatalf("an added tool is not in the registry: %v", reg.Names())
	}
	wantSpecs(everything, "down__status", "exec", "files__read_dir", "files__read_file", "files__write_file", "read")
	wantSpecs(onlyFiles, "down__status", "files__read_dir", "files__read_file", "read")
	for _, n := range []string{"files__secret_keys", "down__admin_reset"} {
		if everything.Allows(n) {
			t.Errorf("a denied pattern allows the added %s", n)
		}
	}
	if onlyFiles.Allows("files__write_file") {
		t.Errorf("an allow list without it allows the added files__write_file")
	}

	guest := guests.Resolve(everything, Caller{SenderID: "42"})
	if diff := cmp.Diff([]string{"read"}, guest.Allowed()); diff != "" {
		t.Errorf("a guest without grants (-want +got):\n%s", diff)
	}
	granted := guests.Resolve(everything, Caller{SenderID: "7"})
	if diff := cmp.Diff([]string{"files__read_dir", "files__read_file", "read"}, granted.Allowed()); diff != "" {
		t.Errorf("a guest granted mcp:files:read_* (-want +got):\n%s", diff)
	}
	if !granted.Covers(guest) || guest.Covers(granted) {
		t.Errorf("Covers: granted ⊇ guest %v, guest ⊇ granted %v", granted.Covers(guest), guest.Covers(granted))
	}
	if everything.Key() == granted.Key() || granted.Key() != guests.Resolve(everything, Caller{SenderID: "7"}).Key() {
		t.Errorf("keys: %q, %q", everything.Key(), granted.Key())
	}
	if msg := Refusal("files__write_file", "telegram", "7"); !strings.Contains(msg, "owner-only") {
		t.Errorf("refusal of an added MCP tool: %s", msg)
	}
}

// TestPolicyPatterns: wildcard entries, and the errors of entries that stand for no tool.
func TestPolicyPatterns(t *testing.T) {
	known := []string{"read", "memory_search", "memory_get", "files__read_file", "web__*"}
	p, err := NewPolicy([]string{"memory_*", "web__fetch", "mcp:files:read_*"}, []string{"memory_get"}, known)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"files__read_file", "memory_search", "web__*"}, p.Allowed()); diff != "" { // web__*: the stand-in of a server not listed yet
		t.Errorf("allowed (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ entry, want string }{
		{"mem*ry_x*", `"mem*ry_x*" matches no tool`},
		{"nosuch__*", `"nosuch__*" matches no tool`},
		{"nosuch__tool", `unknown tool "nosuch__tool"`},
		{"files__[", `"files__[" is a malformed pattern`},
		{"mcp:files:[", `the pattern after the server is malformed`},
	} {
		if _, err := NewPolicy([]string{tt.entry}, nil, known); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.entry, err, tt.want)
		}
	}
	// A server reef knows may add the tool later: its name is accepted now.
	if _, err := NewPolicy([]string{"web__fetch", "files__write_*"}, nil, known); err != nil {
		t.Errorf("a tool of a known server: %v", err)
	}
	var zero Policy
	if zero.Allows("read") || len(zero.Allowed()) != 0 || len(p.Intersect(zero).Allowed()) != 0 {
		t.Errorf("the zero policy allows something")
	}
}

// reef doctor judges a configuration before the servers run, with "<server>__*" standing for
// a server's tools: a grant of some of them counts as a grant of the server, a deny of some
// does not take the server away.
func TestPolicyServerStandIn(t *testing.T) {
	known := []string{"read", "files__*"}
	for _, tt := range []struct {
		allow, deny []string
		want        bool
	}{
		{[]string{"mcp:files:read_*"}, nil, true},
		{[]string{"files__read_*"}, nil, true},
		{[]string{"files__read_file"}, nil, true},
		{[]string{"mcp:files"}, []string{"mcp:files:secret*"}, true},
		{[]string{"mcp:files"}, []string{"mcp:files"}, false},
		{[]string{"read"}, nil, false},
	} {
		p, err := NewPolicy(tt.allow, tt.deny, known)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Allows("files__*"); got != tt.want {
			t.Errorf("allow %v deny %v: files__* allowed %v, want %v", tt.allow, tt.deny, got, tt.want)
		}
	}
}
