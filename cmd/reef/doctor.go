package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/tools/exec"
)

// runDoctor checks everything reef needs and prints each problem with its fix.
func runDoctor(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("doctor", stderr)
	repair := flags.Bool("repair", false, "if the database is damaged, copy every record still readable into a new one (the damaged file is kept beside it)")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	d := &doctor{out: stdout, repair: *repair}
	cfg, err := loadConfig(*configPath)
	switch {
	case err != nil:
		if errors.Is(err, configs.ErrNoProvider) {
			d.fail("configuration", "no LLM provider", configs.NoProviderHelp())
		}
		for _, p := range otherProblems(err) {
			d.fail("configuration", p.Error(), "edit the file (or the environment: REEF_MODEL, OPENAI_API_KEY...) and run `reef doctor` again")
		}
		fmt.Fprintf(stdout, "\n%d problem(s) found.\n", d.problems)
		return 1
	}
	path := *configPath
	if path == "" {
		path = configs.DefaultPath(os.Getenv)
		if _, err := os.Stat(path); err != nil {
			path = "(none: from the environment)"
		}
	}
	d.ok("configuration", path)
	for _, note := range cfg.Notes() {
		fmt.Fprintf(d.out, "  ! %s\n", note)
	}
	d.checkDataDir(cfg)
	d.checkDisk(cfg.DataDir)
	d.checkFileModes(configFile(*configPath), cfg.DataDir)
	for _, a := range cfg.Agents {
		d.checkWorkspace(a)
	}
	d.checkProviders(cfg)
	d.checkSandbox(cfg)
	d.checkWebSearch(cfg)
	channels := d.checkChannels(cfg, path)
	d.checkSlack(cfg) // doctor_slack.go
	d.checkGuestTools(cfg)
	d.checkSecurity(cfg) // audit_exposure.go
	if d.problems > 0 {
		fmt.Fprintf(stdout, "\n%d problem(s) found.\n", d.problems)
		return 1
	}
	if d.warnings > 0 {
		fmt.Fprintf(stdout, "\nNothing stops reef, but %d security warning(s) above need a look (`reef security audit` explains each).\n", d.warnings)
		return 0
	}
	if !channels {
		fmt.Fprintln(stdout, "\nAll good. `reef chat` is ready; `reef gateway` has no chat platform to serve yet (see above).")
		return 0
	}
	fmt.Fprintln(stdout, "\nAll good.")
	return 0
}

// checkChannels lists the channels reef gateway would serve; with none it says how to add
// one. That is no problem for reef chat, so it is a note, not a failure.
func (d *doctor) checkChannels(cfg *configs.Config, path string) bool {
	names := configuredChannels(cfg)
	if t := cfg.Channels.Terminal; t != nil && t.Enabled {
		names = append(names, "terminal")
	}
	if len(names) > 0 {
		d.ok("channels", strings.Join(names, ", "))
		return true
	}
	file := path
	if strings.HasPrefix(path, "(") {
		file = configs.DefaultPath(os.Getenv) + " (create it)"
	}
	reach := "`reef gateway` has nobody to talk to"
	if !cfg.Gateway.HTTP.Off() {
		reach = "`reef gateway` is reached only through its web UI (WebChat, the API) on http://" + cfg.Gateway.HTTP.Listen + "/"
	}
	fmt.Fprintf(d.out, "! channels: no chat platform configured: `reef chat` works, and "+reach+"\n"+
		"    fix: add a channel under `channels:` in %s, e.g.\n"+
		"           channels:\n"+
		"             telegram:\n"+
		"               botToken: ${TELEGRAM_BOT_TOKEN}\n"+
		"         (or just set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN or FEISHU_APP_ID/FEISHU_APP_SECRET);\n"+
		"         every channel's keys are in configs/reef.example.yaml\n", file)
	return false
}

// checkSandbox reports the exec sandbox level in effect (tools.exec.sandbox on this kernel).
func (d *doctor) checkSandbox(cfg *configs.Config) {
	level := exec.Probe(cfg.Tools.Exec.Sandbox)
	if level.Err != nil {
		d.fail("exec sandbox", level.Err.Error()+": exec refuses every command",
			"set tools.exec.sandbox: auto, or install what the level needs (docs/security.md)")
		return
	}
	d.ok("exec sandbox", level.Detail)
}

// checkWebSearch names web_search's provider, or says how to enable the tool (a note: reef
// works without it).
func (d *doctor) checkWebSearch(cfg *configs.Config) {
	if p := cfg.Tools.Web.Search.Provider; p != "" {
		d.ok("web search", p)
		return
	}
	fmt.Fprint(d.out, "! web search: off (the agent is not offered web_search; web_fetch works)\n"+
		"    fix: set BRAVE_API_KEY or TAVILY_API_KEY, or point at your SearXNG with SEARXNG_URL,\n"+
		"         or configure tools.web.search {provider, apiKey, baseUrl} (configs/reef.example.yaml)\n")
}

type doctor struct {
	out      io.Writer
	problems int
	warnings int  // security warnings: reef runs, but "All good" would be false
	repair   bool // --repair: repair a damaged database
}

func (d *doctor) ok(what, detail string) { fmt.Fprintf(d.out, "✓ %s: %s\n", what, detail) }

func (d *doctor) fail(what, problem, fix string) {
	d.problems++
	lines := strings.Split(strings.TrimRight(fix, "\n"), "\n")
	for i := 1; i < len(lines); i++ { // a fix of several lines stays under its first line
		if lines[i] != "" {
			lines[i] = "         " + lines[i]
		}
	}
	fmt.Fprintf(d.out, "✗ %s: %s\n    fix: %s\n", what, problem, strings.Join(lines, "\n"))
}

func (d *doctor) checkDataDir(cfg *configs.Config) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		d.fail("data directory", err.Error(), "make "+cfg.DataDir+" writable or set REEF_HOME")
		return
	}
	if cfg.Storage.Postgres() {
		d.checkPostgres(cfg)
		return
	}
	path := filepath.Join(cfg.DataDir, "reef.db")
	older := 0 // the format of a database the gateway will upgrade; doctor leaves it as it is
	st, err := bolt.Open(path, bolt.Options{BeforeUpgrade: func(from int, _ func(io.Writer) error) error {
		older = from
		return errNotUpgraded
	}})
	damage, isDamaged := errors.AsType[*bolt.DamagedError](err)
	newer, isNewer := errors.AsType[*persistence.FormatError](err)
	switch {
	case errors.Is(err, errNotUpgraded):
		d.ok("database", fmt.Sprintf("%s is in store format %d: reef upgrades it to format %d when it next starts, "+
			"after a backup (backups/reef-before-format-%d-<time>.db.gz)", path, older, persistence.Format, persistence.Format))
		return
	case isNewer:
		d.fail("database", newer.Error(), newer.Help())
		return
	case errors.Is(err, persistence.ErrLocked) && d.repair:
		d.fail("database", "in use by a running reef", "stop it, then run `reef doctor --repair` again")
		return
	case errors.Is(err, persistence.ErrLocked):
		d.ok("database", "in use by a running reef (that is fine)")
		return
	case isDamaged && d.repair:
		d.repairDatabase(path, damage)
		return
	case isDamaged:
		d.fail("database", "damaged (nothing was changed): "+damage.Problem.Error(),
			"stop every reef using it, then run `reef doctor --repair`: it copies every record still readable\n"+
				"into a new "+filepath.Base(path)+" and keeps the damaged file beside it; or put back a backup")
		return
	case errors.Is(err, bolt.ErrEmpty):
		d.fail("database", path+" is empty (0 bytes): reef refuses to start on it rather than start over without a word",
			"put back a backup with `reef restore FILE`, or run `reef init --fresh` to move it aside and start with an empty database")
		return
	case err != nil:
		d.fail("database", err.Error(), "move the damaged file aside; reef creates a new one")
		return
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		d.fail("database", "integrity check failed: "+err.Error(), "restore a backup of "+st.Path())
		return
	}
	if d.repair {
		fmt.Fprintln(d.out, "  ! the database is not damaged: nothing to repair")
	}
	d.ok("database", fmt.Sprintf("%s, store format %d", st.Path(), persistence.Format))
}

// errNotUpgraded stops doctor's open of a database in an older format before it changes it.
var errNotUpgraded = errors.New("doctor does not upgrade the database")

// repairDatabase runs bolt.Repair on the damaged database at path and says what it did.
func (d *doctor) repairDatabase(path string, damage *bolt.DamagedError) {
	fmt.Fprintf(d.out, "  ! database %s is damaged: %v\n  ! repairing: copying every readable record into a new file...\n", path, damage.Problem)
	rep, err := bolt.Repair(path, time.Now())
	if err != nil {
		d.fail("database", "repair failed, nothing was changed: "+err.Error(), "put back a backup of "+path)
		return
	}
	st, err := bolt.Open(path, bolt.Options{ReadOnly: true})
	if err != nil {
		d.fail("database", "the repaired database does not open: "+err.Error(), "put back "+rep.Kept+" or a backup")
		return
	}
	defer st.Close()
	sessions := 0
	_ = st.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		sessions = len(infos)
		return err
	})
	d.ok("database", fmt.Sprintf("repaired: %d records in %d buckets (%d conversations) copied into a new %s", rep.Records, rep.Buckets, sessions, path))
	if rep.Older {
		fmt.Fprintln(d.out, "  ! the last write may be lost (its root page or a meta page is unreadable): the copy may be the state just before it")
	}
	if rep.Lost > 0 {
		fmt.Fprintf(d.out, "  ! %d damaged part(s) could not be copied: what they held is lost\n", rep.Lost)
	}
	if rep.Marks > 0 {
		fmt.Fprintf(d.out, "  ! %d dedup marks found outside the damaged tree were copied too\n", rep.Marks)
	}
	d.conversations(rep.Conversations)
	fmt.Fprintf(d.out, "  ! the damaged file is kept, unchanged, as %s: delete it once you are happy with the repair\n", rep.Kept)
}

// conversations says, per conversation the repair did not keep whole, what it kept and lost.
func (d *doctor) conversations(convs []bolt.Conversation) {
	whole := 0
	for _, c := range convs {
		if c.State == bolt.ConvKept {
			whole++
		}
	}
	fmt.Fprintf(d.out, "  ! conversations: %d of %d kept whole\n", whole, len(convs))
	in, out := 0, 0
	for _, c := range convs {
		in, out = in+c.HeldMessages, out+c.HeldReplies
	}
	if in+out > 0 {
		fmt.Fprintf(d.out, "  ! set aside, not answered or sent again (conversations that may be older than they were may have\n"+
			"    answered or sent them already): %d waiting message%s, %d unsent %s; `reef status` counts them\n",
			in, plural(in), out, replies(out))
	}
	for _, c := range convs {
		var line string
		switch c.State {
		case bolt.ConvKept:
			continue
		case bolt.ConvLost:
			line = "lost: " + c.Why
		case bolt.ConvDamaged:
			line = fmt.Sprintf("%d messages kept", c.Messages)
			if c.Damaged > 0 {
				line += fmt.Sprintf("; what %d damaged part%s held is lost", c.Damaged, plural(c.Damaged))
			}
		case bolt.ConvOlder:
			line = fmt.Sprintf("%d messages kept, as of the write before the last", c.Messages)
		case bolt.ConvRecovered:
			line = fmt.Sprintf("%d messages recovered from outside the damaged tree (it may be older than it was)", c.Messages)
			if c.Rebuilt {
				line = fmt.Sprintf("%d messages recovered from transcript pages that name its chat (its own pages are lost)", c.Messages)
			}
		}
		if c.Loose > 0 && !c.Rebuilt {
			line += fmt.Sprintf(", %d of them from older copies or pages cut off from it", c.Loose)
		}
		if c.Misfits > 0 {
			line += fmt.Sprintf("; %d record%s that did not fit it left out", c.Misfits, plural(c.Misfits))
		}
		if c.Answered > 0 {
			line += fmt.Sprintf("; %d waiting message%s dropped: its transcript answers them", c.Answered, plural(c.Answered))
		}
		if c.HeldMessages > 0 {
			line += fmt.Sprintf("; %d waiting message%s set aside", c.HeldMessages, plural(c.HeldMessages))
		}
		if c.HeldReplies > 0 {
			line += fmt.Sprintf("; %d unsent %s set aside", c.HeldReplies, replies(c.HeldReplies))
		}
		fmt.Fprintf(d.out, "    %s: %s\n", termtext.ID(c.Key), line)
	}
}

func replies(n int) string {
	if n == 1 {
		return "reply"
	}
	return "replies"
}

func (d *doctor) checkWorkspace(a configs.AgentConfig) {
	ws, err := agent.LoadWorkspace(a.Workspace)
	if err != nil {
		d.fail("workspace "+a.ID, err.Error(), "run `reef init`")
		return
	}
	if len(ws.Files) == 0 {
		d.fail("workspace "+a.ID, "no workspace files in "+a.Workspace, "run `reef init`")
		return
	}
	d.ok("workspace "+a.ID, fmt.Sprintf("%s (%d files, %d skills)", a.Workspace, len(ws.Files), len(ws.Skills)))
	for _, w := range ws.Warnings {
		fmt.Fprintf(d.out, "  ! %s\n", w)
	}
}

// checkProviders pings every provider an agent uses (declared but unused ones are skipped),
// and checks that it offers the models the agents name, when it can list them.
func (d *doctor) checkProviders(cfg *configs.Config) {
	used := map[string]bool{}
	models := map[string][]string{} // provider → the models agents name on it
	for _, a := range cfg.Agents {
		for _, ref := range append([]string{a.Model}, a.Fallbacks...) {
			if prov, model, err := configs.SplitModel(ref); err == nil {
				used[prov] = true
				if !slices.Contains(models[prov], model) {
					models[prov] = append(models[prov], model)
				}
			}
		}
	}
	names := make([]string, 0, len(used))
	for name := range cfg.Providers {
		if used[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, pr := range probeProviders(context.Background(), cfg, names, 10*time.Second) {
		name := pr.name
		switch pr.state {
		case probeBroken:
			d.fail("provider "+name, pr.err.Error(), "set providers."+name+".type")
		case probeUnchecked:
			d.ok("provider "+name, "configured (reachability not checked)")
		case probeAuthRefused:
			d.fail("provider "+name, "the API key was rejected", "check the key in providers."+name+".apiKey"+envNote(name, "API_KEY"))
		case probeUnreachable:
			d.fail("provider "+name, pr.err.Error(), "check providers."+name+".baseUrl"+envNote(name, "BASE_URL")+" and that the server is running")
		default:
			d.ok("provider "+name, "reachable"+baseURLNote(pr.pc))
			d.checkModels(pr.client, name, models[name])
		}
	}
}

// checkModels reports each model the provider does not list, with what it offers.
func (d *doctor) checkModels(p providers.Provider, name string, models []string) {
	lister, ok := p.(providers.ModelLister)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	offered, err := lister.Models(ctx)
	cancel()
	if err != nil || len(offered) == 0 { // some compatible servers list nothing: no verdict
		return
	}
	sort.Strings(offered)
	for _, m := range models {
		if slices.Contains(offered, m) {
			d.ok("model "+name+"/"+m, "offered")
			continue
		}
		fix := "use one it offers: " + strings.Join(offered[:min(len(offered), 12)], ", ")
		if len(offered) > 12 {
			fix += fmt.Sprintf(" and %d more", len(offered)-12)
		}
		if like := configs.Suggest(m, offered); like != "" {
			fix = fmt.Sprintf("did you mean %s/%s? ", name, like) + fix
		}
		fix += "\nset it as the agent's model in reef.yaml (or REEF_MODEL); in a chat, /model switches"
		d.fail("model "+name+"/"+m, "not found: "+name+" does not offer it", fix)
	}
}

// envNote names the environment variable a provider's setting comes from when reef runs
// without a config file (OPENAI_API_KEY...), for the providers that have one.
func envNote(name, suffix string) string {
	switch name {
	case "openai", "anthropic", "gemini":
		return " (or " + strings.ToUpper(name) + "_" + suffix + ")"
	}
	return ""
}

func baseURLNote(pc configs.ProviderConfig) string {
	if pc.BaseURL == "" {
		return ""
	}
	return " at " + pc.BaseURL
}
