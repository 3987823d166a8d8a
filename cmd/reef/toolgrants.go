package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/tools"
)

// channelAccess returns the access settings of a configured platform channel.
func channelAccess(cfg *configs.Config, name string) configs.AccessConfig {
	switch name {
	case "telegram":
		return cfg.Channels.Telegram.Access()
	case "discord":
		return cfg.Channels.Discord.Access()
	case "feishu":
		return cfg.Channels.Feishu.Access()
	}
	return configs.AccessConfig{}
}

// toolGrants resolves each configured channel's grants of tools to guests against the tools
// reef is built with. A channel without grants still gets an entry: guests get the read-only
// set (tools.GuestTools).
func toolGrants(cfg *configs.Config) (map[string]*tools.GuestPolicy, error) {
	known := toolNamesOf(cfg)
	out := map[string]*tools.GuestPolicy{}
	for _, name := range configuredChannels(cfg) {
		g, err := tools.NewGuestPolicy(guestRules(channelAccess(cfg, name).Guests), known)
		if err != nil {
			return nil, fmt.Errorf("channels.%s.%w", name, err)
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
	grants, err := toolGrants(cfg)
	if err != nil {
		d.fail("tool grants", err.Error(), "use tool names or groups (group:fs, group:runtime...) in the channel's tools, groupTools and toolsBySender")
		return
	}
	for _, name := range configuredChannels(cfg) {
		a := channelAccess(cfg, name)
		var doors, fixes []string
		var callers []tools.Caller
		if slices.Contains(a.Groups, "*") {
			doors = append(doors, `groups: ["*"]`)
			fixes = append(fixes, fmt.Sprintf(`list group ids in channels.%s.groups instead of "*"`, name))
			callers = append(callers, tools.Caller{Group: true, ChatID: "any group", SenderID: "anyone"})
		}
		if a.DMPolicy == "open" {
			doors = append(doors, "dmPolicy: open")
			fixes = append(fixes, "use dmPolicy: pairing")
			callers = append(callers, tools.Caller{SenderID: "anyone"})
		}
		var open []string
		for _, ac := range cfg.Agents {
			agentPolicy, err := tools.NewPolicy(ac.Tools.Allow, ac.Tools.Deny, toolNamesOf(cfg))
			if err != nil {
				continue // buildAgents reports it
			}
			for _, c := range callers {
				for _, n := range grants[name].Resolve(agentPolicy, c).Allowed() {
					if tools.IsOwnerTool(n) && !slices.Contains(open, n) {
						open = append(open, n)
					}
				}
			}
		}
		if len(open) == 0 {
			continue
		}
		slices.Sort(open)
		fmt.Fprintf(d.out, "! security: channels.%s: %s lets anyone in, and guests may use %s: anyone can run commands or change files on this machine\n"+
			"    fix: take %s out of the allow lists under channels.%s (tools, groupTools, toolsBySender), or let in only whom you know: %s\n",
			name, strings.Join(doors, " and "), strings.Join(open, ", "), strings.Join(open, ", "), name, strings.Join(fixes, "; "))
	}
}

func toolNamesOf(cfg *configs.Config) []string {
	var names []string
	for _, t := range newTools(cfg) {
		names = append(names, t.Spec().Name)
	}
	return names
}
