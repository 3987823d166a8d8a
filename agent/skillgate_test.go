package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
)

// fakeHost has the binaries and variables named, on linux, with config key "tools.web" set.
func fakeHost(bins []string, env map[string]string) SkillHost {
	return SkillHost{
		LookPath: func(f string) (string, error) {
			for _, b := range bins {
				if b == f {
					return "/usr/bin/" + f, nil
				}
			}
			return "", errors.New("not found")
		},
		LookEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		GOOS:    "linux",
		Config:  func(k string) bool { return k == "tools.web" },
	}
}

func skillMD(name, metadata string) string {
	s := "---\nname: " + name + "\ndescription: the " + name + " skill\n"
	if metadata != "" {
		s += "metadata: " + metadata + "\n"
	}
	return s + "---\n"
}

func TestSkillGating(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skills/uv/SKILL.md":       skillMD("uv", `{"openclaw": {"requires": {"bins": ["uv"]}}}`),
		"skills/git/SKILL.md":      skillMD("git", `{"openclaw": {"requires": {"bins": ["git"]}}}`),
		"skills/any/SKILL.md":      skillMD("any", `{"openclaw": {"requires": {"anyBins": ["rg", "grep"]}}}`),
		"skills/none/SKILL.md":     skillMD("none", `{"openclaw": {"requires": {"anyBins": ["rg", "ag"]}}}`),
		"skills/env/SKILL.md":      skillMD("env", `{"openclaw": {"requires": {"env": ["GH_TOKEN", "EMPTY"]}}}`),
		"skills/mac/SKILL.md":      skillMD("mac", `{"openclaw": {"os": ["darwin"]}}`),
		"skills/conf/SKILL.md":     skillMD("conf", `{"openclaw": {"requires": {"config": ["tools.web"]}}}`),
		"skills/noconf/SKILL.md":   skillMD("noconf", `{"openclaw": {"requires": {"config": ["browser.enabled"]}}}`),
		"skills/always/SKILL.md":   skillMD("always", `{"openclaw": {"always": true, "requires": {"bins": ["nope"]}}}`),
		"skills/flat/SKILL.md":     skillMD("flat", "\n  requires:\n    bins: [nope]"),
		"skills/denied/SKILL.md":   skillMD("denied", ""),
		"skills/fetching/SKILL.md": skillMD("fetching", `{"openclaw": {"requires": {"tools": ["web_fetch"]}}}`),
	})
	statuses, warnings := LoadSkills(dir, SkillOptions{Host: fakeHost([]string{"git", "grep"}, map[string]string{"GH_TOKEN": "x", "EMPTY": ""}), Deny: []string{"denied"}})
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	got := map[string]string{}
	for _, s := range statuses {
		got[s.Name] = strings.Join(s.Why, "; ")
		if s.Available != (len(s.Why) == 0) || s.Source != SourceWorkspace {
			t.Errorf("%s: available %v, source %q, why %q", s.Name, s.Available, s.Source, s.Why)
		}
	}
	want := map[string]string{
		"always": "", "any": "", "conf": "", "git": "", "fetching": "",
		"uv":     "missing binary on PATH: uv",
		"none":   "needs one of these on PATH: rg, ag",
		"env":    "environment variable not set: EMPTY",
		"mac":    "runs on darwin, not linux",
		"noconf": "reef config not set: browser.enabled",
		"flat":   "missing binary on PATH: nope",
		"denied": "denied by this agent's skills.deny",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("why (-want +got):\n%s", diff)
	}

	// Present, the binary's skill is listed.
	statuses, _ = LoadSkills(dir, SkillOptions{Host: fakeHost([]string{"uv"}, nil), Allow: []string{"uv", "git"}})
	var avail []string
	for _, s := range Available(statuses) {
		avail = append(avail, s.Name)
	}
	if diff := cmp.Diff([]string{"uv"}, avail); diff != "" {
		t.Errorf("available with uv present and allow [uv git] (-want +got):\n%s", diff)
	}
}

// TestSkillPrecedence: workspace > managed > bundled, the hidden ones listed with the reason.
func TestSkillPrecedence(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	managed, bundledDir := filepath.Join(home, "skills"), filepath.Join(home, "skills-bundled")
	writeFiles(t, ws, map[string]string{"skills/weather/SKILL.md": skillMD("weather", "")})
	writeFiles(t, managed, map[string]string{
		"weather/SKILL.md":       skillMD("weather", ""),
		"summarize-url/SKILL.md": skillMD("summarize-url", ""),
	})
	statuses, _ := LoadSkills(ws, SkillOptions{ManagedDir: managed, BundledDir: bundledDir})
	type row struct{ Name, Source, Location, Why string }
	var got []row
	for _, s := range statuses {
		if s.Name == "weather" || s.Name == "summarize-url" {
			got = append(got, row{s.Name, s.Source, s.Location, strings.Join(s.Why, "; ")})
		}
	}
	want := []row{
		{"summarize-url", SourceManaged, filepath.Join(managed, "summarize-url/SKILL.md"), ""},
		{"summarize-url", SourceBundled, filepath.Join(bundledDir, "summarize-url/SKILL.md"),
			"overridden by the managed skill " + filepath.Join(managed, "summarize-url/SKILL.md")},
		{"weather", SourceWorkspace, "skills/weather/SKILL.md", ""},
		{"weather", SourceManaged, filepath.Join(managed, "weather/SKILL.md"), "overridden by the workspace skill skills/weather/SKILL.md"},
		{"weather", SourceBundled, filepath.Join(bundledDir, "weather/SKILL.md"), "overridden by the workspace skill skills/weather/SKILL.md"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("precedence (-want +got):\n%s", diff)
	}
}

// TestBundledSkills: every bundled skill parses, and installing writes what the agent reads.
func TestBundledSkills(t *testing.T) {
	skills := BundledSkills()
	var names []string
	for _, s := range skills {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"daily-note", "summarize-url", "weather"}, names); diff != "" {
		t.Errorf("bundled (-want +got):\n%s", diff)
	}
	dir := filepath.Join(t.TempDir(), "skills-bundled")
	for range 2 { // the second run finds everything current
		if err := InstallBundledSkills(dir); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "weather", "SKILL.md"))
	if err != nil || !strings.Contains(string(data), "wttr.in") {
		t.Errorf("installed weather skill: %q, %v", data, err)
	}
}

// TestPromptSkillsNeedTheirTools: a skill that requires web_fetch is listed only where the
// conversation offers web_fetch.
func TestPromptSkillsNeedTheirTools(t *testing.T) {
	ws := Workspace{Skills: []Skill{
		{Name: "weather", Description: "d", Location: "/b/weather/SKILL.md", Requires: SkillRequires{Tools: []string{"web_fetch"}}},
		{Name: "plain", Description: "d", Location: "skills/plain/SKILL.md"},
	}}
	read := messages.ToolSpec{Name: "read"}
	without := StablePrompt(PromptInput{Tools: []messages.ToolSpec{read}, Workspace: ws})
	with := StablePrompt(PromptInput{Tools: []messages.ToolSpec{read, {Name: "web_fetch"}}, Workspace: ws})
	if strings.Contains(without, "<name>weather</name>") || !strings.Contains(without, "<name>plain</name>") {
		t.Errorf("without web_fetch the prompt lists:\n%s", without)
	}
	if !strings.Contains(with, "<name>weather</name>") {
		t.Errorf("with web_fetch the prompt lacks weather:\n%s", with)
	}
}
