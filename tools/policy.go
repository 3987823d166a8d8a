package tools

import (
	"fmt"
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
// stands for every tool of one MCP server and GroupMCP for the tools of every MCP server.
const (
	MCPSeparator = "__"
	MCPPrefix    = "mcp:"
	GroupMCP     = "group:mcp"
)

// IsMCPTool reports whether name is the name of an MCP server's tool.
func IsMCPTool(name string) bool {
	return strings.Contains(name, MCPSeparator)
}

// Policy decides which tools one agent may use. Build it with NewPolicy; the zero Policy
// allows nothing.
type Policy struct {
	allowed map[string]bool
}

// NewPolicy resolves allow and deny lists against the names of the known tools. Entries are
// tool names, group names (see Groups) or "*". An empty allow list allows every known tool;
// deny wins over allow. An unknown group or a name not in known is an error that names it.
func NewPolicy(allow, deny []string, known []string) (Policy, error) {
	knownSet := make(map[string]bool, len(known))
	for _, n := range known {
		knownSet[n] = true
	}
	allowSet, err := expand(allow, knownSet, known, "allow")
	if err != nil {
		return Policy{}, err
	}
	if len(allow) == 0 {
		allowSet = knownSet
	}
	denySet, err := expand(deny, knownSet, known, "deny")
	if err != nil {
		return Policy{}, err
	}
	p := Policy{allowed: make(map[string]bool, len(allowSet))}
	for n := range allowSet {
		if knownSet[n] && !denySet[n] {
			p.allowed[n] = true
		}
	}
	return p, nil
}

func expand(entries []string, knownSet map[string]bool, known []string, list string) (map[string]bool, error) {
	set := make(map[string]bool)
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == All:
			for n := range knownSet {
				set[n] = true
			}
		case e == GroupMCP || strings.HasPrefix(e, MCPPrefix):
			// A server that was down when reef started has no known tools: nothing to add.
			prefix := strings.TrimPrefix(e, MCPPrefix) + MCPSeparator
			for n := range knownSet {
				if IsMCPTool(n) && (e == GroupMCP || strings.HasPrefix(n, prefix)) {
					set[n] = true
				}
			}
		case strings.HasPrefix(e, "group:"):
			members, ok := Groups[e]
			if !ok {
				return nil, fmt.Errorf("tools: policy: %s list: unknown group %q; valid groups: %s",
					list, e, strings.Join(GroupNames(), ", "))
			}
			for _, n := range members {
				set[n] = true
			}
		case knownSet[e]:
			set[e] = true
		default:
			valid := append([]string(nil), known...)
			sort.Strings(valid)
			return nil, fmt.Errorf("tools: policy: %s list: unknown tool %q; valid tools: %s (or a group, mcp:<server>, or %q)",
				list, e, strings.Join(valid, ", "), All)
		}
	}
	return set, nil
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

// Allows reports whether the agent may use the tool with that name.
func (p Policy) Allows(name string) bool {
	return p.allowed[name]
}

// Allowed returns the allowed tool names, sorted.
func (p Policy) Allowed() []string {
	names := make([]string, 0, len(p.allowed))
	for n := range p.allowed {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
