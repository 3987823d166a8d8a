package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/tools"
)

const skillsUsage = `usage:
  reef skills list [-agent ID] [-json]         every skill found: name, source, available or why not
  reef skills info NAME [-agent ID] [-json]    one skill: description, location, requirements, status
Skills come from the workspace's skills/ folder, then $REEF_HOME/skills (shared by every agent),
then the skills bundled with reef; a skill of the same name in an earlier place wins.
-agent defaults to the first agent.`

// managedSkillsDir and bundledSkillsDir are where the shared and the bundled skills live.
func managedSkillsDir(cfg *configs.Config) string { return filepath.Join(cfg.Home, "skills") }
func bundledSkillsDir(cfg *configs.Config) string { return filepath.Join(cfg.Home, "bundled-skills") }

// skillOptions are the skill sources and checks of one agent.
func skillOptions(cfg *configs.Config, ac configs.AgentConfig) agent.SkillOptions {
	return agent.SkillOptions{
		ManagedDir: managedSkillsDir(cfg),
		BundledDir: bundledSkillsDir(cfg),
		Host:       agent.SkillHost{Config: configKeySet(cfg)},
		Allow:      ac.Skills.Allow,
		Deny:       ac.Skills.Deny,
	}
}

// configKeySet answers whether a dotted reef config key ("tools.exec.sandbox") is set: present
// and not zero, empty or false. Skills name such keys in requires.config. The config's tree
// is built at the first question: most agents have no skill that asks one.
func configKeySet(cfg *configs.Config) func(key string) bool {
	tree := sync.OnceValue(func() any {
		var tree any
		if b, err := yaml.Marshal(cfg); err == nil {
			if err := yaml.Unmarshal(b, &tree); err != nil {
				tree = nil
			}
		}
		return tree
	})
	return func(key string) bool {
		v := tree()
		for _, part := range strings.Split(key, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = m[part]; !ok {
				return false
			}
		}
		return v != nil && truthy(v)
	}
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v != ""
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	return !reflect.ValueOf(v).IsZero()
}

// skillRow is one skill as reef skills prints it.
type skillRow struct {
	Name        string              `json:"name"`
	Source      string              `json:"source"`
	Available   bool                `json:"available"`
	Why         []string            `json:"why,omitempty"`
	Description string              `json:"description"`
	Location    string              `json:"location"`
	Requires    agent.SkillRequires `json:"requires"`
}

// agentSkills finds the skills of one agent with why each is not offered, counting the tools
// a skill needs that the agent's tool policy does not offer.
func agentSkills(cfg *configs.Config, ac configs.AgentConfig) ([]skillRow, []string, error) {
	policy, err := tools.NewPolicy(ac.Tools.Allow, ac.Tools.Deny, toolNamesOf(cfg))
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: tools: %w", ac.ID, err)
	}
	statuses, warnings := agent.LoadSkills(ac.Workspace, skillOptions(cfg, ac))
	rows := make([]skillRow, 0, len(statuses))
	for _, s := range statuses {
		r := skillRow{Name: s.Name, Source: s.Source, Available: s.Available, Why: s.Why,
			Description: s.Description, Location: s.Location, Requires: s.Requires}
		if missing := agent.UnmetTools(s.Requires, policy.Allows); r.Available && len(missing) > 0 {
			r.Available = false
			r.Why = []string{fmt.Sprintf("needs tool%s %s, which agent %s is not offered", plural(len(missing)), strings.Join(missing, ", "), ac.ID)}
		}
		rows = append(rows, r)
	}
	return rows, warnings, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// runSkills lists the skills of an agent and shows one.
func runSkills(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(stdout, skillsUsage)
		return 0
	}
	action := args[0]
	flags, configPath := commandFlags("skills "+action, stderr)
	agentID := flags.String("agent", "", "agent id (default: the first agent)")
	asJSON := flags.Bool("json", false, "print JSON")
	if action != "list" && action != "info" {
		fmt.Fprintf(stderr, "reef skills: unknown action %q\n%s\n", action, skillsUsage)
		return 2
	}
	rest := args[1:]
	var name string
	if action == "info" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	if code, ok := parseFlags(flags, rest, stdout); !ok {
		return code
	}
	if action == "info" && name == "" && flags.NArg() > 0 {
		name = flags.Arg(0)
	}
	if action == "info" && name == "" {
		fmt.Fprintf(stderr, "reef skills info: give a skill name\n%s\n", skillsUsage)
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	ac, ok := findAgent(cfg, *agentID)
	if !ok {
		fmt.Fprintf(stderr, "reef skills: no agent %q\n", *agentID)
		return 2
	}
	rows, warnings, err := agentSkills(cfg, ac)
	if err != nil {
		fmt.Fprintf(stderr, "reef skills: %v\n", err)
		return 1
	}
	if action == "info" {
		var match []skillRow
		for _, r := range rows {
			if r.Name == name {
				match = append(match, r)
			}
		}
		if len(match) == 0 {
			fmt.Fprintf(stderr, "reef skills info: agent %s has no skill %q (reef skills list shows them)\n", ac.ID, name)
			return 1
		}
		rows = match
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return 1
		}
		return 0
	}
	if action == "info" {
		printSkillInfo(stdout, rows)
		return 0
	}
	printSkillList(stdout, ac.ID, rows, warnings)
	return 0
}

func findAgent(cfg *configs.Config, id string) (configs.AgentConfig, bool) {
	if id == "" {
		return cfg.Agents[0], true
	}
	for _, a := range cfg.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return configs.AgentConfig{}, false
}

func printSkillList(w io.Writer, agentID string, rows []skillRow, warnings []string) {
	if len(rows) == 0 {
		fmt.Fprintf(w, "agent %s has no skills\n", agentID)
	}
	width := 4
	for _, r := range rows {
		width = max(width, len(termtext.Line(r.Name)))
	}
	fmt.Fprintf(w, "%-*s  %-9s  %s\n", width, "NAME", "SOURCE", "STATUS")
	for _, r := range rows {
		status := "available"
		if !r.Available {
			status = "not available: " + strings.Join(r.Why, "; ")
		}
		fmt.Fprintf(w, "%-*s  %-9s  %s\n", width, termtext.Line(r.Name), r.Source, termtext.Line(status))
	}
	for _, warn := range warnings {
		fmt.Fprintf(w, "! %s\n", termtext.Line(warn))
	}
}

func printSkillInfo(w io.Writer, rows []skillRow) {
	for i, r := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (%s)\n", termtext.Line(r.Name), r.Source)
		fmt.Fprintf(w, "  description: %s\n", termtext.Line(r.Description))
		fmt.Fprintf(w, "  location:    %s\n", termtext.Line(r.Location))
		if req := describeRequires(r.Requires); req != "" {
			fmt.Fprintf(w, "  requires:    %s\n", termtext.Line(req))
		}
		if r.Available {
			fmt.Fprintln(w, "  status:      available")
		} else {
			fmt.Fprintf(w, "  status:      not available: %s\n", termtext.Line(strings.Join(r.Why, "; ")))
		}
	}
}

func describeRequires(r agent.SkillRequires) string {
	var parts []string
	add := func(label string, v []string) {
		if len(v) > 0 {
			parts = append(parts, label+" "+strings.Join(v, ", "))
		}
	}
	add("binaries", r.Bins)
	add("one of", r.AnyBins)
	add("env", r.Env)
	add("config", r.Config)
	add("tools", r.Tools)
	add("os", r.OS)
	if r.Always {
		parts = append(parts, "always offered")
	}
	return strings.Join(parts, "; ")
}
