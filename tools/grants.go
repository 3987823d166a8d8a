package tools

import (
	"fmt"
	"sort"
	"strings"
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

// GuestPolicy is one channel's GuestRules resolved against the known tools. Build it with
// NewGuestPolicy; a nil GuestPolicy gives guests GuestTools.
type GuestPolicy struct {
	base     set
	channel  grantSet
	groups   map[string]groupSet
	bySender map[string]grantSet
}

type set map[string]bool

type grantSet struct{ allow, deny set }

type groupSet struct {
	grantSet
	bySender map[string]grantSet
}

// NewGuestPolicy resolves r against the names of the known tools. An unknown group or tool
// name is an error that names it and where it was.
func NewGuestPolicy(r GuestRules, known []string) (*GuestPolicy, error) {
	knownSet := make(set, len(known))
	for _, n := range known {
		knownSet[n] = true
	}
	g := &GuestPolicy{base: make(set), groups: map[string]groupSet{}, bySender: map[string]grantSet{}}
	for _, n := range GuestTools {
		if knownSet[n] {
			g.base[n] = true
		}
	}
	var err error
	if g.channel, err = resolveGrant(r.Channel, knownSet, known, "tools"); err != nil {
		return nil, err
	}
	for _, id := range sortedKeys(r.BySender) {
		if g.bySender[id], err = resolveGrant(r.BySender[id], knownSet, known, fmt.Sprintf("toolsBySender.%s", id)); err != nil {
			return nil, err
		}
	}
	for _, id := range sortedKeys(r.Groups) {
		gg := r.Groups[id]
		gs := groupSet{bySender: map[string]grantSet{}}
		if gs.grantSet, err = resolveGrant(gg.Grant, knownSet, known, fmt.Sprintf("groupTools.%s", id)); err != nil {
			return nil, err
		}
		for _, s := range sortedKeys(gg.BySender) {
			where := fmt.Sprintf("groupTools.%s.bySender.%s", id, s)
			if gs.bySender[s], err = resolveGrant(gg.BySender[s], knownSet, known, where); err != nil {
				return nil, err
			}
		}
		g.groups[id] = gs
	}
	return g, nil
}

func resolveGrant(gr Grant, knownSet set, known []string, where string) (grantSet, error) {
	allow, err := expand(gr.Allow, knownSet, known, "allow")
	if err != nil {
		return grantSet{}, fmt.Errorf("%s: %w", where, err)
	}
	deny, err := expand(gr.Deny, knownSet, known, "deny")
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
	var grants []grantSet
	base := set{}
	if g == nil {
		for _, n := range GuestTools {
			base[n] = true
		}
	} else {
		base = g.base
		grants = append(grants, g.channel, g.bySender[c.SenderID])
		if c.Group {
			for _, id := range []string{"*", c.ChatID} {
				if gs, ok := g.groups[id]; ok {
					grants = append(grants, gs.grantSet, gs.bySender[c.SenderID])
				}
			}
		}
	}
	p := Policy{allowed: map[string]bool{}}
	for n := range agent.allowed {
		ok := base[n]
		for _, gr := range grants {
			ok = ok || gr.allow[n]
		}
		for _, gr := range grants {
			ok = ok && !gr.deny[n]
		}
		if ok {
			p.allowed[n] = true
		}
	}
	return p
}

// Key names the set of tools p allows ("edit,exec,read"): two policies with one key offer
// the same tools.
func (p Policy) Key() string {
	return strings.Join(p.Allowed(), ",")
}

// Covers reports whether p allows every tool q allows.
func (p Policy) Covers(q Policy) bool {
	for n := range q.allowed {
		if !p.allowed[n] {
			return false
		}
	}
	return true
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

// Intersect returns the tools both p and q allow.
func (p Policy) Intersect(q Policy) Policy {
	out := Policy{allowed: make(map[string]bool, len(p.allowed))}
	for n := range p.allowed {
		if q.allowed[n] {
			out.allowed[n] = true
		}
	}
	return out
}
