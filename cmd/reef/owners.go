package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/reefgw/reef/configs"
)

// printOwners says who the owner is on each channel: the terminal always, and in direct
// messages the senders a channel's allowFrom names one by one ("*" lets everyone talk but
// makes nobody the owner). Owner-only tools (cron, exec...) serve only them.
func printOwners(w io.Writer, cfg *configs.Config) {
	who := "the terminal (reef chat)"
	if !cfg.Gateway.HTTP.Off() {
		who += ", and whoever holds the gateway token (WebChat, the API)"
	}
	fmt.Fprintln(w, "owners (may use owner-only tools such as cron and exec): "+who)
	for _, name := range accountIDs(cfg) {
		allow := channelAccess(cfg, name).AllowFrom
		ids := slices.DeleteFunc(slices.Clone(allow), func(id string) bool { return id == "*" })
		switch {
		case len(ids) > 0:
			fmt.Fprintf(w, "  %-9s %s (in direct messages)\n", name, strings.Join(ids, ", "))
		case slices.Contains(allow, "*"):
			fmt.Fprintf(w, "  %-9s nobody: allowFrom \"*\" lets everyone talk but makes nobody the owner; add your id to %s.allowFrom\n", name, accountPath(name))
		default:
			fmt.Fprintf(w, "  %-9s nobody: add your sender id to %s.allowFrom\n", name, accountPath(name))
		}
	}
}
