package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/tools"
)

// channelAccess returns the access settings of a configured bot account, by channels.ID.
func channelAccess(cfg *configs.Config, id string) configs.AccessConfig {
	for _, a := range cfg.Channels.Accounts() {
		if channels.ID(a.Channel, a.Account) == id {
			return a.Access()
		}
	}
	return configs.AccessConfig{}
}

// accountIDs names every configured bot account (channels.ID: telegram, telegram:work).
func accountIDs(cfg *configs.Config) []string {
	var ids []string
	for _, a := range cfg.Channels.Accounts() {
		ids = append(ids, channels.ID(a.Channel, a.Account))
	}
	return ids
}

// accountPath is the key path of an account's block: channels.telegram for the platform
// block's own keys, channels.telegram.accounts.work for a named account.
func accountPath(id string) string {
	channel, account := channels.SplitID(id)
	if account == "" {
		return "channels." + channel
	}
	return "channels." + channel + ".accounts." + account
}

// toolGrants resolves each configured channel's grants of tools to guests against the tools
// reef is built with. A channel without grants still gets an entry: guests get the read-only
// set (tools.GuestTools). extra names tools beyond the built-in ones (the MCP servers').
func toolGrants(cfg *configs.Config, extra ...string) (map[string]*tools.GuestPolicy, error) {
	known := append(toolNamesOf(cfg), extra...)
	out := map[string]*tools.GuestPolicy{}
	for _, name := range accountIDs(cfg) {
		g, err := tools.NewGuestPolicy(guestRules(channelAccess(cfg, name).Guests), known)
		if err != nil {
			return nil, fmt.Errorf("%s.%w", accountPath(name), err)
		}
		out[name] = g
	}
	return out, nil
}

func guestRules(g configs.GuestTools) tools.GuestRules {
	r := tools.GuestRules{Channel: grant(g.Tools), Groups: map[string]tools.GroupGrant{}, BySender: map[string]tools.Grant{}}
	for id, gp := range g.GroupTools {
		gg := tools.GroupGrant{Grant: tools.Grant{Allow: gp.Allow, Deny: gp.Deny}, BySender: map[string]tools.Grant{}}
		for s, p := range gp.BySender {
			gg.BySender[s] = grant(p)
		}
		r.Groups[id] = gg
	}
	for s, p := range g.ToolsBySender {
		r.BySender[s] = grant(p)
	}
	return r
}

func grant(p configs.ToolPolicy) tools.Grant { return tools.Grant{Allow: p.Allow, Deny: p.Deny} }

// checkGuestTools warns when a channel lets anyone in — groups: ["*"] (anyone who adds the
// bot to a group) or dmPolicy: open — and guests there may use tools that change the machine.
func (d *doctor) checkGuestTools(cfg *configs.Config) {
	doors, err := openToolDoors(cfg)
	if err != nil {
		d.fail("tool grants", err.Error(), "use tool names or groups (group:fs, group:runtime...) in the channel's tools, groupTools and toolsBySender")
		return
	}
	for _, door := range doors {
		fmt.Fprintf(d.out, "! security: %s\n    fix: %s\n", door.problem(), door.fix())
		d.warnings++
	}
}

// toolDoor is a channel that lets anyone in while guests there may use owner tools.
type toolDoor struct {
	channel string
	doors   []string // what lets anyone in: groups: ["*"], dmPolicy: open
	fixes   []string // how to close each door
	tools   []string // the owner tools guests may use, sorted
}

func (t toolDoor) problem() string {
	return fmt.Sprintf("%s: %s lets anyone in, and guests may use %s: anyone can run commands or change files on this machine",
		accountPath(t.channel), strings.Join(t.doors, " and "), strings.Join(t.tools, ", "))
}

func (t toolDoor) fix() string {
	return fmt.Sprintf("take %s out of the allow lists under %s (tools, groupTools, toolsBySender), or let in only whom you know: %s",
		strings.Join(t.tools, ", "), accountPath(t.channel), strings.Join(t.fixes, "; "))
}

// openToolDoors returns the channels that let anyone in — groups: ["*"] (anyone who adds the
// bot to a group) or dmPolicy: open — where guests may use tools that change the machine.
func openToolDoors(cfg *configs.Config) ([]toolDoor, error) {
	grants, err := toolGrants(cfg)
	if err != nil {
		return nil, err
	}
	var out []toolDoor
	for _, name := range accountIDs(cfg) {
		a := channelAccess(cfg, name)
		door := toolDoor{channel: name}
		var callers []tools.Caller
		if slices.Contains(a.Groups, "*") {
			door.doors = append(door.doors, `groups: ["*"]`)
			door.fixes = append(door.fixes, fmt.Sprintf(`list group ids in %s.groups instead of "*"`, accountPath(name)))
			callers = append(callers, tools.Caller{Group: true, ChatID: "any group", SenderID: "anyone"})
		}
		if dmOpen(a) {
			door.doors = append(door.doors, "dmPolicy: open")
			door.fixes = append(door.fixes, "use dmPolicy: pairing")
			callers = append(callers, tools.Caller{SenderID: "anyone"})
		}
		for _, ac := range cfg.Agents {
			agentPolicy, err := tools.NewPolicy(ac.Tools.Allow, ac.Tools.Deny, toolNamesOf(cfg))
			if err != nil {
				continue // buildAgents reports it
			}
			for _, c := range callers {
				for _, n := range grants[name].Resolve(agentPolicy, c).Allowed() {
					if tools.IsOwnerTool(n) && !slices.Contains(door.tools, n) {
						door.tools = append(door.tools, n)
					}
				}
			}
		}
		if len(door.tools) > 0 {
			slices.Sort(door.tools)
			out = append(out, door)
		}
	}
	return out, nil
}

// toolNamesOf names the built-in tools, and each configured MCP server's tools, which are
// known only once the server runs, as "<server>__*": mcp:<server> selects it, and the
// security checks see that guests may use that server.
func toolNamesOf(cfg *configs.Config) []string {
	var names []string
	for _, t := range newTools(cfg, nil, nil) {
		names = append(names, t.Spec().Name)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.MCP.Servers)) {
		names = append(names, name+tools.MCPSeparator+"*")
	}
	return names
}
