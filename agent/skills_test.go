package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadSkills(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skills/create-python-script/SKILL.md": "---\nname: create-python-script\ndescription: Write a Python script with uv.\nmetadata:\n  openclaw:\n    requires:\n      bins: [uv]\n---\n# Body\n",
		"skills/weather/SKILL.md":              "\uFEFF---\r\nname: weather\r\ndescription: >\r\n  Current weather\r\n  and forecasts.\r\nhomepage: https://example.com\r\n---\r\nbody\r\n",
		"skills/json-meta/SKILL.md":            "---\nname: json-meta\ndescription: Metadata as a JSON string.\nmetadata: '{\"openclaw\": {\"emoji\": \"x\"}}'\n---\n",
		"skills/dir-named/SKILL.md":            "---\ndescription: No name, so the folder names it.\n---\n",
		"skills/no-description/SKILL.md":       "---\nname: no-description\n---\nbody\n",
		"skills/bad-yaml/SKILL.md":             "---\nname: [unclosed\ndescription: x\n---\n",
		"skills/no-frontmatter/SKILL.md":       "# Just markdown\n\nname: x\ndescription: y\n",
		"skills/unclosed/SKILL.md":             "---\nname: unclosed\ndescription: never closed\n",
		"skills/bad-metadata/SKILL.md":         "---\nname: bad-metadata\ndescription: d\nmetadata: [1, 2]\n---\n",
		"skills/dup/SKILL.md":                  "---\nname: weather\ndescription: a second weather skill\n---\n",
		"skills/empty-folder/README.md":        "not a skill",
		"skills/.hidden/SKILL.md":              "---\nname: hidden\ndescription: hidden\n---\n",
	})
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Skill{
		{Name: "create-python-script", Description: "Write a Python script with uv.", Location: "skills/create-python-script/SKILL.md",
			Metadata: map[string]any{"openclaw": map[string]any{"requires": map[string]any{"bins": []any{"uv"}}}}},
		{Name: "dir-named", Description: "No name, so the folder names it.", Location: "skills/dir-named/SKILL.md"},
		{Name: "json-meta", Description: "Metadata as a JSON string.", Location: "skills/json-meta/SKILL.md",
			Metadata: map[string]any{"openclaw": map[string]any{"emoji": "x"}}},
		{Name: "weather", Description: "Current weather and forecasts.", Location: "skills/weather/SKILL.md"},
	}
	if diff := cmp.Diff(want, ws.Skills); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	warnings := strings.Join(ws.Warnings, "\n")
	for _, w := range []string{
		"skills/no-description/SKILL.md: skipped: frontmatter has no description",
		"skills/bad-yaml/SKILL.md: skipped: bad frontmatter",
		"skills/no-frontmatter/SKILL.md: skipped: no frontmatter",
		"skills/unclosed/SKILL.md: skipped: no frontmatter",
		"skills/bad-metadata/SKILL.md: skipped: bad metadata",
		`skills/dup/SKILL.md: skipped: skill "weather" is already defined in skills/weather/SKILL.md`,
	} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q; got:\n%s", w, warnings)
		}
	}
}

func TestLoadSkillsCap(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range MaxSkills + 5 {
		name := fmt.Sprintf("s%03d", i)
		files["skills/"+name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: skill " + name + "\n---\n"
	}
	writeFiles(t, dir, files)
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Skills) != MaxSkills || ws.Skills[MaxSkills-1].Name != fmt.Sprintf("s%03d", MaxSkills-1) {
		t.Errorf("got %d skills, last %q; want the first %d by name", len(ws.Skills), ws.Skills[len(ws.Skills)-1].Name, MaxSkills)
	}
	if len(ws.Warnings) != 1 || !strings.Contains(ws.Warnings[0], "only the first 150") {
		t.Errorf("warnings = %q", ws.Warnings)
	}
}

func TestLoadSkillsSymlinkOutside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"evil/SKILL.md": "---\nname: evil\ndescription: from outside\n---\n"})
	if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil"), filepath.Join(dir, "skills", "evil")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Skills) != 0 || len(ws.Warnings) != 1 {
		t.Errorf("skills %v, warnings %q; want the outside skill refused with a warning", ws.Skills, ws.Warnings)
	}
}

func TestParseSkillCleansText(t *testing.T) {
	long := strings.Repeat("word ", 400)
	s, err := parseSkill("---\nname: \"two\\nlines\"\ndescription: \""+long+"\"\n---\n", "x")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "two lines" {
		t.Errorf("name = %q, want control characters collapsed", s.Name)
	}
	if n := len([]rune(s.Description)); n != maxSkillDescription || !strings.HasSuffix(s.Description, "…") {
		t.Errorf("description has %d characters, want %d ending in …", n, maxSkillDescription)
	}
}
