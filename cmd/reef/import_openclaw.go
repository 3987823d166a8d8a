package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/openclaw"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
)

const importUsage = `usage:
  reef import openclaw [--from DIR | DIR] [--dry-run] [--force] [-config FILE]
Reads an OpenClaw state directory (default ~/.openclaw, or $OPENCLAW_STATE_DIR) and writes
reef.yaml (-config, default $REEF_HOME/reef.yaml), the agents' workspace files and skills
under $REEF_HOME, and its cron jobs into reef's database. The OpenClaw directory is only read.
--dry-run prints what would be imported and writes nothing; existing files with other
content are replaced only with --force. Secrets are written as ${ENV} references, never copied.`

// runImport imports another assistant's installation; OpenClaw is the one it knows.
func runImport(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, importUsage)
		return 2
	}
	if isHelp(args[0]) {
		fmt.Fprintln(stdout, importUsage)
		return 0
	}
	if args[0] != "openclaw" {
		fmt.Fprintf(stderr, "reef import: %q: reef imports only openclaw\n%s\n", args[0], importUsage)
		return 2
	}
	flags, configPath := commandFlags("import openclaw", stderr)
	from := flags.String("from", "", "the OpenClaw state directory or its openclaw.json (default ~/.openclaw)")
	dryRun := flags.Bool("dry-run", false, "print what would be imported; write nothing")
	force := flags.Bool("force", false, "replace existing files that have other content")
	if code, ok := parseFlags(flags, interspersed(args[1:], map[string]bool{"from": true, "config": true}), stdout); !ok {
		return code
	}
	if rest := flags.Args(); len(rest) == 1 && *from == "" {
		*from = rest[0]
	} else if len(rest) > 0 {
		fmt.Fprintf(stderr, "reef import openclaw: unexpected %q\n%s\n", strings.Join(rest, " "), importUsage)
		return 2
	}
	imp := &importer{stdout: stdout, stderr: stderr, dryRun: *dryRun, force: *force,
		from: openclawDir(*from), target: *configPath}
	return imp.run()
}

// interspersed moves flags after positional arguments to the front, so that
// "reef import openclaw DIR --dry-run" parses like "--dry-run DIR". valued names the flags
// that take a value.
func interspersed(args []string, valued map[string]bool) []string {
	var flagArgs, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		flagArgs = append(flagArgs, a)
		name := strings.TrimLeft(a, "-")
		if valued[name] && i+1 < len(args) {
			i++
			flagArgs = append(flagArgs, args[i])
		}
	}
	return append(flagArgs, rest...)
}

// openclawDir is the directory to import: the flag, $OPENCLAW_STATE_DIR, or ~/.openclaw.
func openclawDir(flagValue string) string {
	dir := flagValue
	if dir == "" {
		dir = os.Getenv("OPENCLAW_STATE_DIR")
	}
	if dir == "" {
		dir = "~/.openclaw"
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, dir[1:])
		}
	}
	return dir
}

type importer struct {
	stdout, stderr io.Writer
	dryRun, force  bool
	from, target   string
}

func (imp *importer) run() int {
	defaults := &configs.Config{}
	configs.ApplyDefaults(defaults, os.Getenv)
	if imp.target == "" {
		imp.target = configs.DefaultPath(os.Getenv)
	}
	in, err := openclaw.Read(imp.from)
	if err != nil {
		fmt.Fprintf(imp.stderr, "reef import openclaw: %v\n", err)
		return 1
	}
	plan, err := openclaw.Build(in, openclaw.Options{ReefHome: defaults.Home, KnownTools: toolNamesOf(defaults), Now: time.Now()})
	if err != nil {
		fmt.Fprintf(imp.stderr, "reef import openclaw: %v\n", err)
		return 1
	}
	imp.report(in, plan)
	if problems := checkImported(plan.YAML); problems != nil && !imp.force {
		fmt.Fprintf(imp.stderr, "\nThe imported configuration does not pass reef's checks:\n%v\n", problems)
		fmt.Fprintln(imp.stderr, "Nothing written. Fix the OpenClaw side, or run again with --force and edit reef.yaml.")
		return 1
	}
	conflicts := plan.Conflicts(imp.target)
	if imp.dryRun {
		fmt.Fprintf(imp.stdout, "\nDry run: nothing written. Without --dry-run reef would write %s, copy %d file(s) and add %d cron job(s).\n",
			imp.target, len(plan.Copies), len(plan.Jobs))
		if len(conflicts) > 0 {
			fmt.Fprintf(imp.stdout, "%d of those files exist with other content and need --force: %s\n", len(conflicts), strings.Join(conflicts, ", "))
		}
		return 0
	}
	if len(conflicts) > 0 && !imp.force {
		fmt.Fprintf(imp.stderr, "\nreef import openclaw: these files exist with other content:\n  %s\nNothing written: move them away, or run again with --force to replace them.\n",
			strings.Join(conflicts, "\n  "))
		return 1
	}
	if err := plan.Write(imp.target, imp.force); err != nil {
		fmt.Fprintf(imp.stderr, "reef import openclaw: %v\n", err)
		return 1
	}
	fmt.Fprintf(imp.stdout, "\nWrote %s and copied %d file(s).\n", imp.target, len(plan.Copies))
	if err := imp.addJobs(plan.Jobs); err != nil {
		fmt.Fprintf(imp.stderr, "reef import openclaw: cron jobs not added: %v\n", err)
		return 1
	}
	fmt.Fprintf(imp.stdout, "Next: set the environment variables above, then run `reef doctor -config %s`.\n", imp.target)
	return 0
}

// report prints what is imported and what is not, and why. It names environment
// variables, never their values.
func (imp *importer) report(in *openclaw.Install, plan *openclaw.Plan) {
	out := imp.stdout
	fmt.Fprintf(out, "Importing OpenClaw from %s\n\nImported:\n", in.ConfigPath)
	for _, l := range plan.Report.Imported {
		fmt.Fprintf(out, "  + %s\n", l)
	}
	if len(plan.Report.Skipped) > 0 {
		fmt.Fprintln(out, "\nNot imported:")
		for _, s := range plan.Report.Skipped {
			fmt.Fprintf(out, "  - %s: %s\n", s.What, s.Why)
		}
	}
	if len(plan.Report.Env) > 0 {
		fmt.Fprintln(out, "\nSecrets are not copied. reef.yaml refers to these environment variables; set them:")
		for _, e := range plan.Report.Env {
			fmt.Fprintf(out, "  %s  (%s)\n", e.Name, e.For)
		}
	}
}

// checkImported loads the imported YAML as reef would, with every unset ${VAR} standing in
// for the secret the user is told to set.
func checkImported(data []byte) error {
	dir, err := os.MkdirTemp("", "reef-import-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "reef.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	_, err = configs.Load(path, placeholderEnv(data))
	if errors.Is(err, configs.ErrNoProvider) && len(otherProblems(err)) == 0 {
		return nil // a provider from the environment is fine
	}
	return err
}

var yamlEnvRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// placeholderEnv is the environment with a stand-in for every variable the imported YAML
// refers to and the user has not set yet.
func placeholderEnv(yaml []byte) func(string) string {
	refs := map[string]bool{}
	for _, m := range yamlEnvRef.FindAllSubmatch(yaml, -1) {
		refs[string(m[1])] = true
	}
	return func(name string) string {
		if v := os.Getenv(name); v != "" || !refs[name] {
			return v
		}
		return "set-" + strings.ToLower(name)
	}
}

// addJobs adds the cron jobs to the database of the written config, skipping jobs an
// earlier import added (same agent and name).
func (imp *importer) addJobs(jobs []openclaw.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	data, err := os.ReadFile(imp.target)
	if err != nil {
		return err
	}
	cfg, err := configs.Load(imp.target, placeholderEnv(data))
	if cfg == nil {
		return err
	}
	store, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	var have []schedule.Job
	if err := store.View(func(r persistence.Reader) error {
		var err error
		have, err = schedule.ListJobs(r)
		return err
	}); err != nil {
		return err
	}
	added := 0
	for _, j := range jobs {
		if hasJob(have, j) {
			fmt.Fprintf(imp.stdout, "  cron job %q of %s is there already\n", j.Input.Name, j.AgentID)
			continue
		}
		in := j.Input
		if _, err := schedule.Offline(store, j.AgentID, "add", schedule.Args{Action: "add", Job: &in}, time.Now()); err != nil {
			fmt.Fprintf(imp.stdout, "  cron job %q not added: %v\n", in.Name, err)
			continue
		}
		added++
	}
	fmt.Fprintf(imp.stdout, "Added %d cron job(s) to %s.\n", added, filepath.Join(cfg.DataDir, "reef.db"))
	return nil
}

func hasJob(have []schedule.Job, j openclaw.Job) bool {
	for _, h := range have {
		if h.AgentID == j.AgentID && h.Name == j.Input.Name {
			return true
		}
	}
	return false
}
