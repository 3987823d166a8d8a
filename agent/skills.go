package agent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxSkills is how many skills are listed in the system prompt at most.
const MaxSkills = 150

const (
	maxSkillFileBytes   = 256 << 10 // SKILL.md files larger than this are skipped
	maxSkillDescription = 1024      // characters of a description shown to the model
)

// Skill is one skill found in the workspace's skills/ folder. The model sees Name, Description
// and Location and reads the SKILL.md itself when a task matches.
type Skill struct {
	Name        string
	Description string
	Location    string // workspace-relative path of SKILL.md, e.g. "skills/pdf/SKILL.md"; absolute for managed and bundled skills
	Metadata    map[string]any
	Source      string        // SourceWorkspace, SourceManaged or SourceBundled; set by LoadSkills
	Requires    SkillRequires // from Metadata; set by LoadSkills
}

// skillFrontmatter is the YAML header of a SKILL.md. Other keys are allowed and ignored.
type skillFrontmatter struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Metadata    yaml.Node `yaml:"metadata"`
}

// loadSkills reads skills/<name>/SKILL.md for every folder under skills/, appending a warning for
// each skill it has to skip.
func loadSkills(root *os.Root, warnings []string) ([]Skill, []string) {
	return loadSkillDir(root, DirSkills, warnings)
}

// loadSkillDir reads <dir>/<name>/SKILL.md for every folder under dir in root; locations are
// relative to root.
func loadSkillDir(root *os.Root, skillDir string, warnings []string) ([]Skill, []string) {
	dir, err := root.Open(skillDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, warnings
	}
	if err != nil {
		return nil, append(warnings, fmt.Sprintf("skills: not loaded: %v", err))
	}
	entries, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return nil, append(warnings, fmt.Sprintf("skills: not loaded: %v", err))
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var found []Skill
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		loc := path.Join(skillDir, e.Name(), "SKILL.md")
		text, _, partial, err := readRegular(root, loc, maxSkillFileBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without SKILL.md (or a stray file) is not a skill
		}
		if err == nil && partial {
			err = fmt.Errorf("larger than %d bytes", maxSkillFileBytes)
		}
		var s Skill
		if err == nil {
			s, err = parseSkill(text, e.Name())
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: skipped: %v", loc, err))
			continue
		}
		s.Location = loc
		found = append(found, s)
	}
	// Sort by name; among skills of the same name the one in a folder of that name wins, then
	// the first folder by name.
	slices.SortFunc(found, func(a, b Skill) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), boolOrder(a.Location == ownLocation(skillDir, a))-boolOrder(b.Location == ownLocation(skillDir, b)),
			strings.Compare(a.Location, b.Location))
	})
	var skills []Skill
	for i, s := range found {
		if i > 0 && s.Name == found[i-1].Name {
			warnings = append(warnings, fmt.Sprintf("%s: skipped: skill %q is already defined in %s", s.Location, s.Name, skills[len(skills)-1].Location))
			continue
		}
		skills = append(skills, s)
	}
	if len(skills) > MaxSkills {
		warnings = append(warnings, fmt.Sprintf("skills: %d found, only the first %d by name are listed", len(skills), MaxSkills))
		skills = skills[:MaxSkills:MaxSkills]
	}
	return skills, warnings
}

// ownLocation is where a skill named s.Name is expected: <dir>/<name>/SKILL.md.
func ownLocation(dir string, s Skill) string { return path.Join(dir, s.Name, "SKILL.md") }

// boolOrder sorts true before false.
func boolOrder(b bool) int {
	if b {
		return 0
	}
	return 1
}

// parseSkill reads the frontmatter of a SKILL.md. A missing name falls back to the folder name;
// a missing description is an error.
func parseSkill(text, dirName string) (Skill, error) {
	header, ok := frontmatter(text)
	if !ok {
		return Skill{}, errors.New("no frontmatter (the file must start with a --- line and a YAML block closed by ---)")
	}
	var fm skillFrontmatter
	if err := yaml.Unmarshal([]byte(header), &fm); err != nil {
		return Skill{}, fmt.Errorf("bad frontmatter: %w", err)
	}
	s := Skill{Name: oneLine(fm.Name, 128), Description: oneLine(fm.Description, maxSkillDescription)}
	if s.Name == "" {
		s.Name = oneLine(dirName, 128)
	}
	if s.Description == "" {
		return Skill{}, errors.New("frontmatter has no description")
	}
	if !fm.Metadata.IsZero() {
		md, err := decodeMetadata(&fm.Metadata)
		if err != nil {
			return Skill{}, fmt.Errorf("bad metadata: %w", err)
		}
		s.Metadata = md
	}
	return s, nil
}

// decodeMetadata accepts a YAML mapping or a string holding a JSON object (the form OpenClaw
// skills often use: metadata: '{"openclaw": {...}}').
func decodeMetadata(n *yaml.Node) (map[string]any, error) {
	var md map[string]any
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		return nil, nil
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		if err := json.Unmarshal([]byte(n.Value), &md); err != nil {
			return nil, errors.New("a string that is not a JSON object")
		}
		return md, nil
	case n.Kind != yaml.MappingNode:
		return nil, errors.New("not a mapping")
	}
	if err := n.Decode(&md); err != nil {
		return nil, err
	}
	return md, nil
}

// frontmatter returns the YAML between a leading "---" line and the next "---" line.
func frontmatter(text string) (string, bool) {
	text = strings.TrimPrefix(text, "\uFEFF")
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || strings.TrimRight(first, " \t\r") != "---" {
		return "", false
	}
	var header bytes.Buffer
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		trimmed := strings.TrimRight(line, " \t\r")
		if trimmed == "---" || trimmed == "..." {
			return header.String(), true
		}
		header.WriteString(strings.TrimSuffix(line, "\r"))
		header.WriteByte('\n')
	}
	return "", false
}

// oneLine collapses whitespace (newlines included) to single spaces, drops control characters
// and caps the result at max runes.
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if n := len([]rune(s)); n > max {
		s = runePrefix(s, max-1) + "…"
	}
	return s
}
