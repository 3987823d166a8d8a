package main

import (
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
)

const securityUsage = `Usage:
  reef security audit [-config FILE] [-json]
      The effective security posture: who may talk to each bot, what guests may do, the exec
      sandbox, what web requests may reach, webhook listeners and their secrets, file modes of reef.yaml and the data
      directory, and secrets written into reef.yaml instead of ${VARIABLES}. Each problem comes
      with its fix. -json (anywhere) prints JSON for scripts.
      Exit status: 0 when no problem is found, 1 when problems are found, 2 when the
      configuration cannot be read.
` + approvalsUsage

// audit is what `reef security audit` found: what is in place, and each problem with its fix.
type audit struct {
	Config   string    `json:"config"` // the file audited, "" when reef runs on the environment alone
	Posture  []fact    `json:"posture"`
	Problems []finding `json:"problems"`
}

// fact is one part of the security posture that is fine.
type fact struct {
	Check  string `json:"check"`
	Where  string `json:"where"`
	Detail string `json:"detail"`
}

// finding is one problem: where it is, what it lets happen, and how to fix it.
type finding struct {
	Check   string `json:"check"` // dmPolicy, groups, guestTools, execSandbox, webGuard, execApprovals, webhook, fileMode, clearSecret, configuration
	Where   string `json:"where"` // a key path (channels.telegram.dmPolicy) or a file
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

func (a *audit) ok(check, where, detail string) {
	a.Posture = append(a.Posture, fact{Check: check, Where: where, Detail: detail})
}

func (a *audit) add(fs ...finding) { a.Problems = append(a.Problems, fs...) }

// runSecurity runs `reef security audit`.
func runSecurity(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("security audit", stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	rest, err := parseInterspersed(flags, args)
	if err != nil {
		return flagExit(err, flags, stdout)
	}
	if len(rest) > 0 && rest[0] == "approvals" {
		cfg := adminConfig(*configPath, stderr)
		if cfg == nil {
			return 2
		}
		return runApprovals(cfg, rest[1:], *asJSON, stdout, stderr)
	}
	if len(rest) != 1 || rest[0] != "audit" {
		if len(rest) == 1 && isHelp(rest[0]) {
			printUsage(stdout, flags)
			return 0
		}
		printUsage(stderr, flags)
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if cfg == nil {
		fmt.Fprintf(stderr, "reef security audit: %v\n", err)
		return 2
	}
	a := runAudit(cfg, configFile(*configPath), readOnlyProblems(err)) // an unset secret matters where it is used
	if *asJSON {
		printJSON(stdout, a)
	} else {
		printAudit(stdout, a)
	}
	if len(a.Problems) > 0 {
		return 1
	}
	return 0
}

// configFile is the configuration file in use: path, else the default one when it exists,
// else "" (reef runs on the environment alone).
func configFile(path string) string {
	if path != "" {
		return path
	}
	path = configs.DefaultPath(os.Getenv)
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// runAudit checks cfg, loaded from file ("" for none), with the configuration problems
// Load found besides a missing provider (an audit needs none).
func runAudit(cfg *configs.Config, file string, problems []error) *audit {
	a := &audit{Config: file, Posture: []fact{}, Problems: []finding{}}
	for _, p := range problems {
		a.add(finding{Check: "configuration", Where: orDash(file), Problem: p.Error(), Fix: "edit the file; `reef doctor` checks it too"})
	}
	auditAccess(a, cfg)
	auditGuestTools(a, cfg)
	auditSandbox(a, cfg)
	auditWeb(a, cfg)
	auditApprovals(a, cfg)
	auditWebhooks(a, cfg)
	auditExposure(a, cfg) // audit_exposure.go
	files := fileModeFindings(file, cfg.DataDir)
	a.add(files...)
	if len(files) == 0 {
		what := "the data directory and its database are"
		if len(clearSecretPaths(file)) > 0 {
			what = filepath.Base(file) + ", the data directory and its database are"
		}
		a.ok("fileMode", "files", what+" private to reef's user")
	}
	auditClearSecrets(a, file)
	return a
}

func printAudit(w io.Writer, a *audit) {
	from := a.Config
	if from == "" {
		from = "the environment (no reef.yaml)"
	}
	fmt.Fprintf(w, "Security audit of %s\n\n", from)
	for _, f := range a.Posture {
		fmt.Fprintf(w, "✓ %s: %s\n", f.Where, f.Detail)
	}
	if len(a.Problems) == 0 {
		fmt.Fprintln(w, "\nNo problems found.")
		return
	}
	fmt.Fprintln(w)
	for _, p := range a.Problems {
		fmt.Fprintf(w, "✗ %s: %s\n    fix: %s\n", p.Where, p.Problem, p.Fix)
	}
	fmt.Fprintf(w, "\n%d problem(s) found.\n", len(a.Problems))
}

// auditAccess reports each channel's door: open direct messages and every group.
func auditAccess(a *audit, cfg *configs.Config) {
	names := accountIDs(cfg)
	if len(names) == 0 {
		a.ok("access", "channels", "none configured: only the terminal (the owner) talks to reef")
	}
	for _, name := range names {
		acc := channelAccess(cfg, name)
		path := accountPath(name)
		switch {
		case acc.DMPolicy == "open":
			a.add(finding{Check: "dmPolicy", Where: path + ".dmPolicy",
				Problem: "open: anyone who finds the bot may talk to it, spend your tokens and use the guests' tools",
				Fix:     "dmPolicy: pairing (approve each person with `reef pairing approve`) or allowlist with their ids in allowFrom"})
		case dmOpen(acc):
			a.add(finding{Check: "dmPolicy", Where: path + ".allowFrom",
				Problem: acc.DMPolicy + ` with "*" in allowFrom is open: every stranger is admitted without pairing, may spend your tokens and use the guests' tools`,
				Fix:     `take "*" out of allowFrom and list the ids you mean`})
		}
		if slices.Contains(acc.Groups, "*") {
			a.add(finding{Check: "groups", Where: path + ".groups",
				Problem: `["*"]: anyone who adds the bot to a group may talk to it there`,
				Fix:     `list the group ids you mean instead of "*": groups: ["-1001234567890"]`})
		}
		groups := "none"
		if n := len(acc.Groups); n > 0 && !slices.Contains(acc.Groups, "*") {
			groups = fmt.Sprintf("%d listed", n)
		}
		if !dmOpen(acc) && !slices.Contains(acc.Groups, "*") {
			a.ok("access", path, fmt.Sprintf("direct messages: %s; groups: %s", acc.DMPolicy, groups))
		}
	}
}

// auditGuestTools reports the channels where anyone may get in and use the owner's tools (the
// check `reef doctor` warns with), and what guests get elsewhere.
func auditGuestTools(a *audit, cfg *configs.Config) {
	doors, err := openToolDoors(cfg)
	if err != nil {
		a.add(finding{Check: "configuration", Where: "tool grants", Problem: err.Error(),
			Fix: "use tool names or groups (group:fs, group:runtime...) in the channel's tools, groupTools and toolsBySender"})
		return
	}
	for _, d := range doors {
		a.add(finding{Check: "guestTools", Where: accountPath(d.channel), Problem: strings.TrimPrefix(d.problem(), accountPath(d.channel)+": "), Fix: d.fix()})
	}
	if len(doors) == 0 && len(configuredChannels(cfg)) > 0 {
		a.ok("guestTools", "guests", "no channel lets anyone in with the owner's tools (exec, write, edit, cron...)")
	}
}

// auditSandbox reports the exec sandbox in effect (as `reef doctor` shows it) when an agent
// may use exec: off, or rlimits only, lets a command write wherever reef's user may.
func auditSandbox(a *audit, cfg *configs.Config) {
	var agents []string
	for _, ac := range cfg.Agents {
		if p, err := tools.NewPolicy(ac.Tools.Allow, ac.Tools.Deny, toolNamesOf(cfg)); err == nil && p.Allows("exec") {
			agents = append(agents, ac.ID)
		}
	}
	if len(agents) == 0 {
		a.ok("execSandbox", "exec", "no agent may use it")
		return
	}
	level := exec.Probe(cfg.Tools.Exec.Sandbox)
	switch {
	case level.Err != nil:
		a.ok("execSandbox", "exec sandbox", level.Err.Error()+": exec refuses every command (`reef doctor` says how to fix it)")
	case level.Mode == exec.SandboxOff || level.Mode == "rlimits":
		a.add(finding{Check: "execSandbox", Where: "tools.exec.sandbox",
			Problem: level.Detail + "; commands of agent " + strings.Join(agents, ", ") + " may change any file reef's user may",
			Fix:     "tools.exec.sandbox: landlock (Linux 5.13 or later) or bwrap (apt-get install bubblewrap); or deny exec: agents[].tools.deny: [exec]"})
	default:
		a.ok("execSandbox", "exec sandbox", level.Detail)
	}
}

// auditWebhooks reports the webhook listeners: on an address other machines reach, or
// without the secret that tells the platform's requests from forged ones.
func auditWebhooks(a *audit, cfg *configs.Config) {
	var listeners []string
	for _, acc := range cfg.Channels.Accounts() { // every bot account, each with its own endpoint
		name := channels.ID(acc.Channel, acc.Account)
		if t := acc.Telegram; t != nil && t.Mode == "webhook" {
			listeners = append(listeners, name+" on "+t.WebhookListen)
			a.add(listenFinding(acc.Path+".webhookListen", t.WebhookListen, "127.0.0.1:8443")...)
			switch {
			case t.WebhookSecret == "":
				a.add(finding{Check: "webhook", Where: acc.Path + ".webhookSecret",
					Problem: "empty: anyone who finds the webhook URL can post forged updates",
					Fix:     "webhookSecret: ${TELEGRAM_WEBHOOK_SECRET}, a long random string (openssl rand -hex 32)"})
			case len(t.WebhookSecret) < minWebhookSecret:
				a.add(finding{Check: "webhook", Where: acc.Path + ".webhookSecret",
					Problem: fmt.Sprintf("%d characters: short enough to guess", len(t.WebhookSecret)),
					Fix:     fmt.Sprintf("use %d random characters or more (openssl rand -hex 32)", minWebhookSecret)})
			}
		}
		if f := acc.Feishu; f != nil && f.Mode == "webhook" {
			listeners = append(listeners, name+" on "+f.WebhookListen)
			a.add(listenFinding(acc.Path+".webhookListen", f.WebhookListen, "127.0.0.1:9000")...)
			switch {
			case f.VerificationToken == "" && f.EncryptKey == "":
				a.add(finding{Check: "webhook", Where: acc.Path,
					Problem: "webhook without verificationToken or encryptKey: anyone can post forged events",
					Fix:     "encryptKey: ${FEISHU_ENCRYPT_KEY} (the app's Events & Callbacks → Encryption strategy)"})
			case f.EncryptKey == "":
				a.add(finding{Check: "webhook", Where: acc.Path + ".encryptKey",
					Problem: "empty: events are checked by the verification token alone, neither signed nor encrypted",
					Fix:     "encryptKey: ${FEISHU_ENCRYPT_KEY} (the app's Events & Callbacks → Encryption strategy)"})
			}
		}
	}
	if len(listeners) == 0 {
		a.ok("webhook", "webhooks", "none: no webhook listener (channels connect out)")
		return
	}
	a.ok("webhook", "webhooks", "listening: "+strings.Join(listeners, ", "))
}

// minWebhookSecret is the length under which a webhook secret counts as guessable.
const minWebhookSecret = 16

// listenFinding reports a webhook listener that other machines can reach.
func listenFinding(where, addr, local string) []finding {
	if loopback(addr) {
		return nil
	}
	return []finding{{Check: "webhook", Where: where,
		Problem: addr + " is reachable from other machines: requests reach reef without your TLS proxy",
		Fix:     "webhookListen: " + local + ", with your TLS proxy (Caddy, nginx) forwarding the public URL to it"}}
}

// loopback reports whether the listen address addr accepts connections from this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// fileModeFindings reports reef.yaml (file, "" for none), the data directory and its reef.db
// when users other than reef's may read or change them. `reef doctor` warns with them too.
func fileModeFindings(file, dataDir string) []finding {
	if runtime.GOOS == "windows" {
		return nil // no Unix modes
	}
	type target struct{ path, holds, fix string }
	db := filepath.Join(dataDir, "reef.db")
	targets := []target{{dataDir, "it holds every conversation and reef's state", "chmod 700 " + dataDir},
		{db, "it holds every conversation", "chmod 600 " + db}}
	if held := clearSecretPaths(file); len(held) > 0 { // a file of ${VAR} references (the example) may be public
		targets = append([]target{{file, "it holds secrets written in the file (" + strings.Join(held, ", ") + ")", "chmod 600 " + file}}, targets...)
	}
	var out []finding
	for _, t := range targets {
		fi, err := os.Stat(t.path)
		if err != nil {
			continue // not there yet: reef creates it private
		}
		if problem := modeProblem(fi.Mode()); problem != "" {
			out = append(out, finding{Check: "fileMode", Where: t.path, Problem: problem + "; " + t.holds, Fix: t.fix})
		}
	}
	return out
}

// clearSecretPaths are the keys of file ("" for none) that hold a secret written in it
// rather than a ${VAR} reference; nil when it holds none or cannot be read.
func clearSecretPaths(file string) []string {
	if file == "" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var paths []string
	for _, c := range configs.ClearSecrets(data) {
		if !slices.Contains(paths, c.Path) {
			paths = append(paths, c.Path)
		}
	}
	return paths
}

// modeProblem says who besides the owner may read or change a file or directory of mode m,
// or "" when nobody may.
func modeProblem(m fs.FileMode) string {
	read := fs.FileMode(0o4)
	if m.IsDir() {
		read |= 0o1 // entering a directory reads what is in it by name
	}
	var who []string
	for _, c := range []struct {
		shift uint
		name  string
	}{{3, "its group"}, {0, "every other user"}} {
		bits := m.Perm() >> c.shift & 0o7
		var can []string
		if bits&read != 0 {
			can = append(can, "read")
		}
		if bits&0o2 != 0 {
			can = append(can, "change")
		}
		if len(can) > 0 {
			who = append(who, c.name+" may "+strings.Join(can, " and ")+" it")
		}
	}
	if len(who) == 0 {
		return ""
	}
	return fmt.Sprintf("mode %04o: %s", m.Perm(), strings.Join(who, ", "))
}

// auditClearSecrets reports secrets written into the configuration file instead of ${VAR}.
func auditClearSecrets(a *audit, file string) {
	if file == "" {
		a.ok("clearSecret", "secrets", "no reef.yaml: every secret comes from the environment")
		return
	}
	data, err := os.ReadFile(file)
	if err != nil {
		a.add(finding{Check: "clearSecret", Where: file, Problem: err.Error(), Fix: "make it readable by reef's user"})
		return
	}
	found := configs.ClearSecrets(data)
	for _, s := range found {
		key := s.Path[strings.LastIndex(s.Path, ".")+1:]
		a.add(finding{Check: "clearSecret", Where: fmt.Sprintf("%s:%d", file, s.Line),
			Problem: s.Path + " is written in the file: whoever reads reef.yaml (a backup, a command the agent runs) has it",
			Fix:     fmt.Sprintf("write %s: ${%s} and set %s in reef's environment", key, envName(s.Path), envName(s.Path))})
	}
	if len(found) == 0 {
		a.ok("clearSecret", "secrets", "every secret in "+filepath.Base(file)+" comes from the environment")
	}
}

// envName suggests an environment variable for a secret's key path:
// providers.openai.apiKey → OPENAI_API_KEY, channels.telegram.botToken → TELEGRAM_BOT_TOKEN.
func envName(path string) string {
	parts := strings.Split(path, ".")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	var b strings.Builder
	for i, part := range parts {
		if i > 0 {
			b.WriteByte('_')
		}
		for j, r := range part {
			switch {
			case unicode.IsUpper(r) && j > 0:
				b.WriteByte('_')
				b.WriteRune(r)
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(unicode.ToUpper(r))
			default:
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// checkFileModes warns when users other than reef's may read or change reef.yaml, the data
// directory or the database (the audit's check).
func (d *doctor) checkFileModes(file, dataDir string) {
	for _, f := range fileModeFindings(file, dataDir) {
		fmt.Fprintf(d.out, "! security: %s: %s\n    fix: %s\n", f.Where, f.Problem, f.Fix)
	}
}
