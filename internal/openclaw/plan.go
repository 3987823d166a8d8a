// Package openclaw moves an OpenClaw installation to reef: it reads an OpenClaw state
// directory (openclaw.json in JSON5, the agents' workspaces, skills, cron/jobs.json) and
// plans a reef.yaml, the workspace files to copy and the cron jobs to add, with a report of
// what it could not map and why. It never writes to the OpenClaw directory, never copies a
// secret (tokens and keys become ${ENV} references), and Apply never overwrites a file
// unless told to. `reef import openclaw` (cmd/reef) drives it.
package openclaw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reefgw/reef/schedule"
)

// Options say where the import goes.
type Options struct {
	ReefHome string // $REEF_HOME: workspaces go to <home>/workspace, <home>/workspace-<id>; skills to <home>/skills
	// KnownTools are reef's tool names; tool policy entries naming others are left out
	// (reef refuses unknown tool names at start).
	KnownTools []string
	Now        time.Time
}

// Plan is everything an import would write.
type Plan struct {
	YAML   []byte // the reef.yaml
	Copies []Copy // workspace and skill files
	Jobs   []Job  // cron jobs to add
	Report Report
}

// Copy is one file to copy.
type Copy struct {
	From, To string
}

// Job is one cron job to add, for agent AgentID.
type Job struct {
	AgentID string
	Input   schedule.JobInput
}

// Report says what was imported and what was not.
type Report struct {
	Imported []string // one line per thing imported
	Skipped  []Skip   // what could not be mapped, with the reason
	Env      []EnvVar // environment variables the new config refers to
}

// Skip is one thing not imported.
type Skip struct {
	What, Why string
}

// EnvVar is a ${NAME} the config refers to, and what the user must set it to.
type EnvVar struct {
	Name string
	For  string // e.g. "channels.telegram.botToken in openclaw.json (not copied)"
}

// mapper builds a Plan.
type mapper struct {
	in      *Install
	opts    Options
	out     outConfig
	rep     Report
	env     map[string]bool
	ids     map[string]string // OpenClaw agent id → reef agent id
	known   map[string]bool
	workDir map[string]string // reef agent id → OpenClaw workspace
}

// Build plans the import of in.
func Build(in *Install, opts Options) (*Plan, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	m := &mapper{in: in, opts: opts, env: map[string]bool{}, ids: map[string]string{},
		known: map[string]bool{}, workDir: map[string]string{}}
	for _, t := range opts.KnownTools {
		m.known[t] = true
	}
	m.note()
	m.agents()
	m.settings()
	m.providers()
	m.session()
	m.channels()
	m.bindings()
	p := &Plan{}
	p.Copies = m.files()
	p.Jobs = m.jobs()
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(&m.out); err != nil {
		return nil, fmt.Errorf("openclaw: %w", err)
	}
	p.YAML = append([]byte(m.header()), body.Bytes()...)
	p.Report = m.rep
	return p, nil
}

func (m *mapper) imported(format string, args ...any) {
	m.rep.Imported = append(m.rep.Imported, fmt.Sprintf(format, args...))
}

func (m *mapper) skip(what, why string, args ...any) {
	m.rep.Skipped = append(m.rep.Skipped, Skip{What: what, Why: fmt.Sprintf(why, args...)})
}

// header is the comment on top of the written reef.yaml.
func (m *mapper) header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# reef.yaml imported from OpenClaw (%s) by `reef import openclaw` on %s.\n",
		m.in.ConfigPath, m.opts.Now.UTC().Format("2006-01-02"))
	b.WriteString("# Every key is documented in configs/reef.example.yaml; docs/openclaw.md explains the import.\n")
	if len(m.rep.Env) > 0 {
		b.WriteString("# Secrets are not in this file. Set these environment variables before starting reef:\n")
		for _, e := range m.rep.Env {
			fmt.Fprintf(&b, "#   %s: %s\n", e.Name, e.For)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// note reports the top-level sections reef has no use for.
func (m *mapper) note() {
	handled := map[string]string{
		"agents": "", "models": "", "channels": "", "bindings": "", "session": "", "messages": "",
		"cron": "", "env": "", "tools": "", "memory": "", "meta": "", "wizard": "",
		"gateway":  "reef's gateway has its own web and control settings (docs/operations.md)",
		"skills":   "skill settings (allowBundled, entries) have no reef equivalent; skills themselves are copied",
		"plugins":  "OpenClaw plugins do not run in reef",
		"hooks":    "webhook hooks have no reef equivalent yet",
		"browser":  "reef has no browser tool",
		"talk":     "voice mode has no reef equivalent",
		"auth":     "OAuth profiles are not imported: reef uses API keys (providers.<name>.apiKey)",
		"secrets":  "secret providers are not imported: reef reads secrets from the environment",
		"logging":  "reef has its own log settings (log.level, log.file)",
		"commands": "reef's slash commands are fixed (docs/commands.md)",
	}
	for _, k := range m.in.Config.keys {
		why, ok := handled[k]
		switch {
		case !ok:
			m.skip(k, "not a setting reef has")
		case why != "":
			m.skip(k, "%s", why)
		}
	}
	for _, name := range sortedKeys(m.in.Config.Env) {
		if name == "vars" || name == "shellEnv" {
			continue
		}
		m.skip("env."+name, "environment values are not copied: set %s in reef's environment yourself", name)
	}
}

var envRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// secret turns an OpenClaw secret (a string, ${VAR}, or a SecretRef) into a ${NAME}
// reference; a value written in the file is never copied: the user is told to set NAME.
// fallbackEnv: OpenClaw reads NAME from the environment when the key is absent.
func (m *mapper) secret(raw json.RawMessage, name, where string, fallbackEnv bool) string {
	var s string
	var ref struct {
		Source string `json:"source"`
		ID     string `json:"id"`
	}
	switch {
	case len(raw) == 0 || string(raw) == "null" || string(raw) == `""`:
		if !fallbackEnv {
			return ""
		}
		m.needEnv(name, where+" (OpenClaw read it from the environment too)")
	case json.Unmarshal(raw, &s) == nil && envRef.MatchString(s):
		name = envRef.FindStringSubmatch(s)[1]
		m.needEnv(name, where+" (the same variable OpenClaw used)")
	case json.Unmarshal(raw, &s) == nil:
		m.needEnv(name, "the value of "+where+" in openclaw.json (not copied)")
	case json.Unmarshal(raw, &ref) == nil && ref.Source == "env" && envName.MatchString(ref.ID):
		name = ref.ID
		m.needEnv(name, where+" (the SecretRef's variable)")
	default:
		m.needEnv(name, fmt.Sprintf("the secret %s resolves to (a %s SecretRef, not resolved by the import)", where, ref.Source))
	}
	return "${" + name + "}"
}

func (m *mapper) needEnv(name, why string) {
	if m.env[name] {
		return
	}
	m.env[name] = true
	m.rep.Env = append(m.rep.Env, EnvVar{Name: name, For: why})
}

// stateDir resolves a path from openclaw.json: "~/.openclaw/..." is taken inside the state
// directory being imported (it may have been copied elsewhere), other "~/" paths against
// the home directory, relative ones against the state directory.
func (m *mapper) stateDir(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/.openclaw"); ok && (rest == "" || rest[0] == '/') {
		return filepath.Join(m.in.Dir, rest)
	}
	return expandHome(p, m.in.Dir)
}

var reefID = regexp.MustCompile(`[^a-z0-9_-]+`)

// reefAgentID makes an OpenClaw agent id a valid reef id.
func reefAgentID(id string) string {
	s := reefID.ReplaceAllString(strings.ToLower(strings.TrimSpace(id)), "-")
	s = strings.Trim(s, "-")
	if s == "" {
		return "main"
	}
	return s
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
