package agent

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Where a skill comes from. A skill of the same name in an earlier source hides the later ones.
const (
	SourceWorkspace = "workspace" // <workspace>/skills
	SourceManaged   = "managed"   // $REEF_HOME/skills, shared by every agent
	SourceBundled   = "bundled"   // shipped inside the reef binary
)

//go:embed bundled
var bundled embed.FS

// SkillOptions say where an agent's skills come from besides its workspace, what they are
// checked against, and which of them the agent may use.
type SkillOptions struct {
	ManagedDir string // $REEF_HOME/skills; "" for none
	// BundledDir is where the bundled skills are put on disk for the agent to read
	// (InstallBundledSkills); "" leaves them out.
	BundledDir string
	Host       SkillHost
	// Allow, when not empty, names the only skills the agent may use; Deny names skills it
	// may not use. Deny wins.
	Allow, Deny []string
}

// SkillStatus is one skill found for an agent and whether it is offered.
type SkillStatus struct {
	Skill
	Available bool
	Why       []string // why not, when not available
}

// LoadSkills finds the skills of the workspace at dir, of o.ManagedDir and the bundled ones,
// by precedence (workspace, managed, bundled), and checks each against o. The result is sorted
// by name, then by precedence; a skill hidden by one of the same name in an earlier source is
// listed as not available. Warnings tell of skills that could not be read.
func LoadSkills(dir string, o SkillOptions) ([]SkillStatus, []string) {
	var all []Skill
	var warnings []string
	add := func(skills []Skill, source, base string) {
		for _, s := range skills {
			s.Source, s.Requires = source, parseRequires(s.Metadata)
			if base != "" {
				s.Location = filepath.Join(base, filepath.FromSlash(s.Location))
			}
			all = append(all, s)
		}
	}
	if root, err := os.OpenRoot(dir); err == nil {
		var ws []Skill
		ws, warnings = loadSkills(root, warnings)
		root.Close()
		add(ws, SourceWorkspace, "")
	} else {
		warnings = append(warnings, fmt.Sprintf("workspace skills: not loaded: %v", err))
	}
	if o.ManagedDir != "" {
		root, err := os.OpenRoot(o.ManagedDir)
		switch {
		case err == nil:
			var managed []Skill
			managed, warnings = loadSkillDir(root, ".", warnings)
			root.Close()
			add(managed, SourceManaged, o.ManagedDir)
		case !errors.Is(err, fs.ErrNotExist):
			warnings = append(warnings, fmt.Sprintf("managed skills (%s): not loaded: %v", o.ManagedDir, err))
		}
	}
	if o.BundledDir != "" {
		add(BundledSkills(), SourceBundled, o.BundledDir)
	}
	return gate(all, o), warnings
}

// gate marks which skills the agent is offered.
func gate(all []Skill, o SkillOptions) []SkillStatus {
	rank := map[string]int{SourceWorkspace: 0, SourceManaged: 1, SourceBundled: 2}
	slices.SortStableFunc(all, func(a, b Skill) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return rank[a.Source] - rank[b.Source]
	})
	out := make([]SkillStatus, 0, len(all))
	for i, s := range all {
		st := SkillStatus{Skill: s}
		switch {
		case i > 0 && all[i-1].Name == s.Name:
			first := out[len(out)-1]
			for j := len(out) - 1; j >= 0 && out[j].Name == s.Name; j-- {
				first = out[j]
			}
			st.Why = []string{fmt.Sprintf("overridden by the %s skill %s", first.Source, first.Location)}
		case slices.Contains(o.Deny, s.Name):
			st.Why = []string{"denied by this agent's skills.deny"}
		case len(o.Allow) > 0 && !slices.Contains(o.Allow, s.Name):
			st.Why = []string{"not in this agent's skills.allow"}
		default:
			st.Why = o.Host.Unmet(s.Requires)
		}
		st.Available = len(st.Why) == 0
		out = append(out, st)
	}
	return out
}

// Available returns the skills of statuses that are offered, sorted by name, at most MaxSkills.
func Available(statuses []SkillStatus) []Skill {
	var skills []Skill
	for _, s := range statuses {
		if s.Available && len(skills) < MaxSkills {
			skills = append(skills, s.Skill)
		}
	}
	return skills
}

// BundledSkills returns the skills shipped in the binary, with locations relative to the
// folder they are installed in ("weather/SKILL.md").
func BundledSkills() []Skill {
	entries, err := bundled.ReadDir("bundled")
	if err != nil {
		panic(err) // the embedded folder is part of the build
	}
	var skills []Skill
	for _, e := range entries {
		text, err := bundled.ReadFile(path.Join("bundled", e.Name(), "SKILL.md"))
		if err != nil {
			continue
		}
		s, err := parseSkill(string(text), e.Name())
		if err != nil {
			panic(fmt.Sprintf("agent: bundled skill %s: %v", e.Name(), err)) // caught by the tests
		}
		s.Location = path.Join(e.Name(), "SKILL.md")
		skills = append(skills, s)
	}
	return skills
}

// InstallBundledSkills writes the bundled skills under dir (one folder each), so that the
// agent can read them with its file tools. Files that are already current are left alone.
func InstallBundledSkills(dir string) error {
	return fs.WalkDir(bundled, "bundled", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "bundled"), "/")
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := bundled.ReadFile(p)
		if err != nil {
			return err
		}
		if old, err := os.ReadFile(dst); err == nil && string(old) == string(data) {
			return nil
		}
		tmp := dst + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return fmt.Errorf("agent: install bundled skills: %w", err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return fmt.Errorf("agent: install bundled skills: %w", err)
		}
		return nil
	})
}
