package tools

import (
	"fmt"
	"slices"
	"sort"
)

// OwnerTools change the machine or the world: commands, file writes, schedules, sub-agents,
// messages to other chats; and memory_search and memory_get, which bring the owner's private
// notes into the conversation. Guests get none of them unless the configuration grants them.
// Names this build lacks are listed for the tools to come.
var OwnerTools = []string{"exec", "process", "write", "edit", "apply_patch", "cron",
	"sessions_spawn", "sessions_send", "memory_write", "memory_search", "memory_get",
	"sessions_yield", "subagents", "sessions_list", "sessions_history"}

// GuestTools is what a guest (a paired sender, a group member, anyone under an open DM
// policy) may use by default: tools that only read, message, which reaches only the
// conversation the run answers, and update_plan, which only shows progress there. Names this
// build lacks are skipped.
var GuestTools = []string{"read", "ls", "web_fetch", "web_search", "message", "update_plan"}

// Grant adds tools to what guests may use (Allow) or takes tools away (Deny). Entries are
// tool names, group names (see Groups) or "*".
type Grant struct {
	Allow, Deny []string
}

// GroupGrant is a Grant for one group, with Grants for single senders in that group.
type GroupGrant struct {
	Grant
	BySender map[string]Grant
}

// GuestRules are one channel's grants to guests: to every guest on the channel, to the
// members of one group (by group id, "*" for every group), and to one sender (by sender id,
// in direct messages and groups alike).
type GuestRules struct {
	Channel  Grant
	Groups   map[string]GroupGrant
	BySender map[string]Grant
}

// Caller is whom a run answers, as the tool policy sees it.
type Caller struct {
	Owner    bool   // the terminal, a direct message from a sender allowFrom names, a cron or heartbeat run
	Group    bool   // a group or thread, not a direct chat
	ChatID   string // the group's id (in groups)
	SenderID string
}

// GuestPolicy is one channel's GuestRules checked against the known tools. Build it with
// NewGuestPolicy; a nil GuestPolicy gives guests GuestTools. Its entries are matched when a
// run asks (see Policy), so a grant of mcp:<server> covers tools the server adds later.
type GuestPolicy struct {
	base     []string
	channel  grantSet
	groups   map[string]groupSet
	bySender map[string]grantSet
}

type grantSet struct{ allow, deny []string }

type groupSet struct {
	grantSet
	bySender map[string]grantSet
}

// NewGuestPolicy checks r against the names of the known tools (see NewPolicy). An unknown
// group or tool name is an error that names it and where it was.
func NewGuestPolicy(r GuestRules, known []string) (*GuestPolicy, error) {
	v := newVetter(newNames(known), nil)
	g := &GuestPolicy{groups: map[string]groupSet{}, bySender: map[string]grantSet{}}
	for _, n := range GuestTools {
		if v.known.Has(n) {
			g.base = append(g.base, n)
		}
	}
	var err error
	if g.channel, err = resolveGrant(r.Channel, v, "tools"); err != nil {
		return nil, err
	}
	for _, id := range sortedKeys(r.BySender) {
		if g.bySender[id], err = resolveGrant(r.BySender[id], v, fmt.Sprintf("toolsBySender.%s", id)); err != nil {
			return nil, err
		}
	}
	for _, id := range sortedKeys(r.Groups) {
		gg := r.Groups[id]
		gs := groupSet{bySender: map[string]grantSet{}}
		if gs.grantSet, err = resolveGrant(gg.Grant, v, fmt.Sprintf("groupTools.%s", id)); err != nil {
			return nil, err
		}
		for _, s := range sortedKeys(gg.BySender) {
			where := fmt.Sprintf("groupTools.%s.bySender.%s", id, s)
			if gs.bySender[s], err = resolveGrant(gg.BySender[s], v, where); err != nil {
				return nil, err
			}
		}
		g.groups[id] = gs
	}
	return g, nil
}

func resolveGrant(gr Grant, v vetter, where string) (grantSet, error) {
	allow, err := v.check(gr.Allow, "allow")
	if err != nil {
		return grantSet{}, fmt.Errorf("%s: %w", where, err)
	}
	deny, err := v.check(gr.Deny, "deny")
	if err != nil {
		return grantSet{}, fmt.Errorf("%s: %w", where, err)
	}
	return grantSet{allow: allow, deny: deny}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Resolve returns the tools c may use of those the agent's policy allows. The owner gets the
// agent's policy unchanged. A guest gets GuestTools, plus what the grants that match c allow
// (the channel's; the sender's; in a group, the group's, the "*" group's and the sender's
// within them), minus what any of them denies: deny always wins.
func (g *GuestPolicy) Resolve(agent Policy, c Caller) Policy {
	if c.Owner {
		return agent
	}
	if len(agent.terms) == 0 {
		return Policy{}
	}
	var grants []grantSet
	guest := term{}
	if g == nil {
		guest.allow = slices.Clone(GuestTools)
	} else {
		guest.allow = slices.Clone(g.base)
		grants = append(grants, g.channel, g.bySender[c.SenderID])
		if c.Group {
			for _, id := range []string{"*", c.ChatID} {
				if gs, ok := g.groups[id]; ok {
					grants = append(grants, gs.grantSet, gs.bySender[c.SenderID])
				}
			}
		}
	}
	for _, gr := range grants {
		guest.allow = append(guest.allow, gr.allow...)
		guest.deny = append(guest.deny, gr.deny...)
	}
	return agent.with(guest)
}

// IsOwnerTool reports whether name is one of OwnerTools or an MCP server's tool: an MCP
// server can do anything, so its tools are the owner's unless the configuration grants them.
func IsOwnerTool(name string) bool {
	if IsMCPTool(name) {
		return true
	}
	for _, n := range OwnerTools {
		if n == name {
			return true
		}
	}
	return false
}
