package main

import (
	"net/url"
	"strings"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/netguard"
)

// sensitiveHosts are what an allowPrivate exception must not open: this machine's services
// and the cloud metadata services.
var sensitiveHosts = []string{"127.0.0.1", "[::1]", "localhost", "169.254.169.254", "[fd00:ec2::254]"}

// auditWeb reports what the SSRF guard lets requests made for the agent reach: public
// addresses only, or also the exceptions of tools.web.allowPrivate. An exception that opens
// this machine or a metadata service is a problem.
func auditWeb(a *audit, cfg *configs.Config) {
	allow := cfg.Tools.Web.AllowPrivate
	if len(allow) == 0 {
		a.ok("webGuard", "web requests", "public addresses only (loopback, private, link-local, metadata and CGNAT refused)")
		return
	}
	g, err := netguard.New(netguard.Config{AllowPrivate: allow})
	if err != nil {
		return // a configuration problem, reported as such
	}
	var opened []string
	for _, h := range sensitiveHosts {
		if g.CheckURL(&url.URL{Scheme: "http", Host: h}) == nil {
			opened = append(opened, strings.Trim(h, "[]"))
		}
	}
	if len(opened) > 0 {
		a.add(finding{Check: "webGuard", Where: "tools.web.allowPrivate",
			Problem: "web_fetch may reach " + strings.Join(opened, ", ") + ": this machine's own services or the cloud metadata service",
			Fix:     "list only the hosts or ranges the agent needs, e.g. [192.168.1.0/24, nas.lan]"})
		return
	}
	a.ok("webGuard", "web requests", "public addresses, and "+strings.Join(allow, ", ")+" (tools.web.allowPrivate)")
}
