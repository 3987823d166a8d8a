package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillsList: `reef skills list` shows where each skill comes from and why one is not
// offered: a missing binary hides a skill until it is on PATH; a workspace skill overrides a
// shared one, which overrides the bundled one; an agent's skills.deny hides one.
func TestSkillsList(t *testing.T) {
	home, bin := newHome(t), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, "workspace/skills/transcribe/SKILL.md"),
		"---\nname: transcribe\ndescription: speech to text\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"reef-test-whisper\"]}}}\n---\n")
	write(filepath.Join(home, "workspace/skills/weather/SKILL.md"), "---\nname: weather\ndescription: the workspace's weather\n---\n")
	write(filepath.Join(home, "skills/weather/SKILL.md"), "---\nname: weather\ndescription: the shared weather\n---\n")
	write(filepath.Join(home, "skills/summarize-url/SKILL.md"), "---\nname: summarize-url\ndescription: shared summaries\n---\n")
	write(filepath.Join(home, "reef.yaml"), "agents:\n  - id: main\n    skills: {deny: [daily-note]}\n")
	e := env{"REEF_HOME": home, "PATH": bin}

	res := reef(t, e, "", "skills", "list")
	if res.code != 0 {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"transcribe     workspace  not available: missing binary on PATH: reef-test-whisper",
		"weather        workspace  available",
		"weather        managed    not available: overridden by the workspace skill skills/weather/SKILL.md",
		"weather        bundled    not available: overridden by the workspace skill skills/weather/SKILL.md",
		"summarize-url  managed    available",
		"summarize-url  bundled    not available: overridden by the managed skill " + filepath.Join(home, "skills/summarize-url/SKILL.md"),
		"daily-note     bundled    not available: denied by this agent's skills.deny",
	} {
		if !strings.Contains(res.stdout, want+"\n") {
			t.Errorf("list lacks %q:\n%s", want, res.stdout)
		}
	}

	write(filepath.Join(bin, "reef-test-whisper"), "#!/bin/sh\n")
	res = reef(t, e, "", "skills", "info", "transcribe", "-json")
	var rows []skillRow
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil || res.code != 0 {
		t.Fatalf("exit %d, %v: %s %s", res.code, err, res.stdout, res.stderr)
	}
	if len(rows) != 1 || !rows[0].Available || rows[0].Source != "workspace" || rows[0].Requires.Bins[0] != "reef-test-whisper" {
		t.Errorf("with the binary on PATH: %+v; want transcribe available", rows)
	}
	if res := reef(t, e, "", "skills", "info", "nope"); res.code != 1 || !strings.Contains(res.stderr, `no skill "nope"`) {
		t.Errorf("unknown skill: exit %d, stderr %q", res.code, res.stderr)
	}
}
