package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/reefgw/reef/configs"
)

// dmOpen reports whether a channel admits every stranger to direct messages: dmPolicy open,
// or any policy but disabled with "*" in allowFrom (pairing and allowlist then admit all).
func dmOpen(acc configs.AccessConfig) bool {
	return acc.DMPolicy == "open" || acc.DMPolicy != "disabled" && slices.Contains(acc.AllowFrom, "*")
}

// auditExposure reports what reaches reef from the network and what its user may do: the
// web listener off loopback (plain HTTP to the Control UI and an API that runs the agent's
// tools), reef running as root, and which sessions dmScope main shares.
func auditExposure(a *audit, cfg *configs.Config) {
	h := cfg.Gateway.HTTP
	switch {
	case h.Off():
		a.ok("listen", "gateway.http.listen", "off: no web listener")
	case !loopback(h.Listen):
		a.add(finding{Check: "listen", Where: "gateway.http.listen",
			Problem: h.Listen + " is reachable from other machines over plain HTTP: the gateway token, the Control UI and the API (which runs the agent, exec included) cross the network unencrypted",
			Fix:     "gateway.http.listen: 127.0.0.1:18789, with a TLS proxy (Caddy, nginx) or an SSH tunnel in front"})
	default:
		a.ok("listen", "gateway.http.listen", h.Listen+": this machine only")
	}
	switch {
	case euid() != 0:
	case os.Getenv("REEF_ALLOW_ROOT") == "1":
		a.ok("root", "reef's user", "root, accepted with REEF_ALLOW_ROOT=1: commands exec runs may read reef's keys in /proc")
	default:
		a.add(finding{Check: "root", Where: "reef's user",
			Problem: "reef runs as root: commands exec runs may read reef's environment and keys in /proc, and every file on the machine",
			Fix:     "run reef as its own unprivileged user (useradd -r reef); where root is meant (a throwaway container), say so with REEF_ALLOW_ROOT=1"})
	}
	if cfg.Session.DMScope == "main" {
		a.ok("dmScope", "session.dmScope", "main: only the owner's direct chats share the main session; every other sender's direct chat is a session of its own")
	}
}

// euid is reef's effective user id (a variable for tests).
var euid = os.Geteuid

// checkSecurity warns, in reef doctor, of the risky settings reef security audit reports:
// doors anyone may walk through, the exec sandbox off, web requests opened to this machine
// or the metadata service, the web listener off loopback, running as root.
func (d *doctor) checkSecurity(cfg *configs.Config) {
	a := &audit{}
	auditAccess(a, cfg)
	auditSandbox(a, cfg)
	auditWeb(a, cfg)
	auditApprovals(a, cfg)
	auditWebhooks(a, cfg)
	auditExposure(a, cfg)
	for _, p := range a.Problems {
		fmt.Fprintf(d.out, "! security: %s: %s\n    fix: %s\n", p.Where, p.Problem, p.Fix)
		d.warnings++
	}
}
