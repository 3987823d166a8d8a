package tools

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// Groups names sets of tools that allow and deny lists may refer to as one entry. A group may
// name tools this build does not have; they are skipped.
var Groups = map[string][]string{
	"group:fs":         {"read", "write", "edit", "ls", "apply_patch"},
	"group:runtime":    {"exec", "process"},
	"group:web":        {"web_fetch", "web_search"},
	"group:memory":     {"memory_search", "memory_get"},
	"group:sessions":   {"sessions_spawn", "sessions_send", "sessions_list", "sessions_history", "sessions_yield", "subagents"},
	"group:automation": {"cron"},
	"group:messaging":  {"message"},
}

// All is the allow or deny entry that stands for every known tool.
const All = "*"

// MCP tools are named "<server>__<tool>" (tools/mcp). In allow and deny lists, "mcp:<server>"
// stands for every tool of one MCP server, "mcp:<server>:<pattern>" for those of its tools
// whose name on the server matches the pattern, and GroupMCP for the tools of every MCP server.
const (
	MCPSeparator = "__"
	MCPPrefix    = "mcp:"
	GroupMCP     = "group:mcp"
)

// IsMCPTool reports whether name is the name of an MCP server's tool.
func IsMCPTool(name string) bool {
	return strings.Contains(name, MCPSeparator)
}

// mcpServer is the server part of an MCP tool's name ("files" of "files__read"), or "".
func mcpServer(name string) string {
	server, _, ok := strings.Cut(name, MCPSeparator)
	if !ok {
		return ""
	}
	return server
}

// Catalog is what a Policy is judged over: the tools reef has. A Registry is one, and grows
// when an MCP server adds tools while reef runs.
type Catalog interface {
	Names() []string // every tool's name, sorted
	Has(name string) bool
}

// Policy decides which tools one agent, or one run, may use. It keeps the allow and deny
// entries, not a list of names, and matches a name against them when asked: a tool an MCP
// server adds while reef runs meets the same rules as one it had at start. Build it with
// NewPolicy or Registry.Policy; the zero Policy allows nothing.
type Policy struct {
	terms []term  // a name is allowed when every term allows it
	known Catalog // the tools there are; a name not among them is never allowed
}

// term is one allow and deny list: a name is allowed when an allow entry matches it and no
// deny entry does.
type term struct {
	allow, deny []string
}

func (t term) allows(name string) bool {
	ok := false
	for _, e := range t.allow {
		if match(e, name) || mayMatch(e, name) {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	for _, e := range t.deny {
		if match(e, name) {
			return false
		}
	}
	return true
}

// key is the term in a canonical form.
func (t term) key() string {
	a, d := slices.Clone(t.allow), slices.Clone(t.deny)
	slices.Sort(a)
	slices.Sort(d)
	return strings.Join(slices.Compact(a), ",") + "!" + strings.Join(slices.Compact(d), ",")
}

// match reports whether one checked allow or deny entry stands for name.
func match(e, name string) bool {
	switch {
	case e == All:
		return true
	case e == GroupMCP:
		return IsMCPTool(name)
	case strings.HasPrefix(e, MCPPrefix):
		server, pattern, ok := strings.Cut(strings.TrimPrefix(e, MCPPrefix), ":")
		remote, found := strings.CutPrefix(name, server+MCPSeparator)
		if !found {
			return false
		}
		if !ok {
			return true
		}
		m, _ := path.Match(pattern, remote)
		return m
	case strings.HasPrefix(e, "group:"):
		return slices.Contains(Groups[e], name)
	case isPattern(e):
		m, _ := path.Match(e, name)
		return m
	}
	return e == name
}

// mayMatch reports whether name is the stand-in "<server>__*" of a server's tools not listed
// yet (reef doctor's view of the configuration) and e may match one of them. Only allow
// entries are judged so: a deny of some of a server's tools leaves the others allowed.
func mayMatch(e, name string) bool {
	server, rest, ok := strings.Cut(name, MCPSeparator)
	if !ok || rest != "*" {
		return false
	}
	if s, _, ok := strings.Cut(strings.TrimPrefix(e, MCPPrefix), ":"); strings.HasPrefix(e, MCPPrefix) && ok {
		return s == server // mcp:<server>:<pattern>
	}
	return strings.HasPrefix(e, server+MCPSeparator) // a tool of the server, or a pattern of them
}

// isPattern reports whether an entry is a wildcard pattern ("files__read_*").
func isPattern(e string) bool { return strings.ContainsAny(e, "*?[") }

// names is a Catalog of a fixed list of names.
type names struct {
	list []string
	set  map[string]bool
}

func newNames(list []string) names {
	n := names{list: slices.Clone(list), set: make(map[string]bool, len(list))}
	slices.Sort(n.list)
	for _, s := range list {
		n.set[s] = true
	}
	return n
}

func (n names) Names() []string      { return slices.Clone(n.list) }
func (n names) Has(name string) bool { return n.set[name] }

// NewPolicy checks allow and deny lists against the names of the known tools. Entries are
// tool names, group names (see Groups), "mcp:<server>", "mcp:<server>:<pattern>", patterns
// with * and ? ("files__read_*"), or "*". An empty allow list allows every known tool; deny
// wins over allow. An unknown group, or a name or pattern that is no known tool, is an error
// that names it; an MCP tool's name counts as known when its server is, so a server may add
// it later (a name "<server>__*" in known declares a server whose tools are not listed yet).
func NewPolicy(allow, deny []string, known []string) (Policy, error) {
	return newPolicy(allow, deny, newNames(known), nil)
}

func newPolicy(allow, deny []string, known Catalog, servers []string) (Policy, error) {
	v := newVetter(known, servers)
	a, err := v.check(allow, "allow")
	if err != nil {
		return Policy{}, err
	}
	d, err := v.check(deny, "deny")
	if err != nil {
		return Policy{}, err
	}
	if len(a) == 0 {
		a = []string{All}
	}
	return Policy{terms: []term{{allow: a, deny: d}}, known: known}, nil
}

// vetter checks allow and deny entries against the known tools and MCP servers.
type vetter struct {
	known   Catalog
	names   []string
	servers map[string]bool
}

func newVetter(known Catalog, servers []string) vetter {
	v := vetter{known: known, names: known.Names(), servers: map[string]bool{}}
	for _, s := range servers {
		v.servers[s] = true
	}
	for _, n := range v.names {
		if s := mcpServer(n); s != "" {
			v.servers[s] = true
		}
	}
	return v
}

// check returns the entries trimmed, or an error naming the first one that stands for no tool.
func (v vetter) check(entries []string, list string) ([]string, error) {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if err := v.entry(e, list); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (v vetter) entry(e, list string) error {
	switch {
	case e == All || e == GroupMCP:
		return nil
	case strings.HasPrefix(e, MCPPrefix):
		// A server that is down, or not configured, has no tools: nothing to match yet.
		_, pattern, ok := strings.Cut(strings.TrimPrefix(e, MCPPrefix), ":")
		if _, err := path.Match(pattern, ""); ok && err != nil {
			return fmt.Errorf("tools: policy: %s list: %q: the pattern after the server is malformed", list, e)
		}
		return nil
	case strings.HasPrefix(e, "group:"):
		if _, ok := Groups[e]; !ok {
			return fmt.Errorf("tools: policy: %s list: unknown group %q; valid groups: %s",
				list, e, strings.Join(GroupNames(), ", "))
		}
		return nil
	case isPattern(e):
		if _, err := path.Match(e, ""); err != nil {
			return fmt.Errorf("tools: policy: %s list: %q is a malformed pattern", list, e)
		}
		if s := mcpServer(e); s != "" && !isPattern(s) && v.servers[s] {
			return nil // the server may add matching tools later
		}
		for _, n := range v.names {
			if match(e, n) {
				return nil
			}
		}
		return fmt.Errorf("tools: policy: %s list: %q matches no tool; valid tools: %s",
			list, e, strings.Join(v.names, ", "))
	case v.known.Has(e) || v.servers[mcpServer(e)]:
		return nil
	}
	return fmt.Errorf("tools: policy: %s list: unknown tool %q; valid tools: %s (or a group, mcp:<server>, or %q)",
		list, e, strings.Join(v.names, ", "), All)
}

// GroupNames returns the names of Groups, sorted.
func GroupNames() []string {
	names := make([]string, 0, len(Groups)+1)
	for g := range Groups {
		names = append(names, g)
	}
	names = append(names, GroupMCP)
	sort.Strings(names)
	return names
}

// Allows reports whether the agent may use the tool with that name, as the tools are now.
func (p Policy) Allows(name string) bool {
	if len(p.terms) == 0 || !p.known.Has(name) {
		return false
	}
	for _, t := range p.terms {
		if !t.allows(name) {
			return false
		}
	}
	return true
}

// Allowed returns the names of the tools p allows now, sorted.
func (p Policy) Allowed() []string {
	if len(p.terms) == 0 {
		return []string{}
	}
	all := p.known.Names()
	out := make([]string, 0, len(all))
	for _, n := range all {
		if p.Allows(n) {
			out = append(out, n)
		}
	}
	return out
}

// Key names p's rules: two policies with one key allow the same tools, now and after an MCP
// server changed its tools.
func (p Policy) Key() string {
	keys := make([]string, 0, len(p.terms))
	for _, t := range p.terms {
		keys = append(keys, t.key())
	}
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), ";")
}

// Covers reports whether p allows every tool q allows now.
func (p Policy) Covers(q Policy) bool {
	for _, n := range q.Allowed() {
		if !p.Allows(n) {
			return false
		}
	}
	return true
}

// Intersect returns the policy that allows what both p and q allow.
func (p Policy) Intersect(q Policy) Policy {
	if len(p.terms) == 0 || len(q.terms) == 0 {
		return Policy{}
	}
	return p.with(q.terms...)
}

// Without returns p less the named tools.
func (p Policy) Without(names ...string) Policy {
	if len(p.terms) == 0 {
		return p
	}
	return p.with(term{allow: []string{All}, deny: names})
}

// with returns p with more terms, leaving p's own slice alone.
func (p Policy) with(ts ...term) Policy {
	out := Policy{terms: slices.Clip(slices.Clone(p.terms)), known: p.known}
	seen := map[string]bool{}
	for _, t := range out.terms {
		seen[t.key()] = true
	}
	for _, t := range ts {
		if k := t.key(); !seen[k] {
			seen[k] = true
			out.terms = append(out.terms, t)
		}
	}
	return out
}
