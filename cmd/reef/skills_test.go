package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/providers/fake"
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

// TestBundledSkillInChat: through the real binary, the prompt lists the bundled skills the
// agent can use (weather too: it needs web_fetch, which the owner is offered), at a location
// the model can read, and
// apply_patch changes the workspace.
func TestBundledSkillInChat(t *testing.T) {
	home := newHome(t)
	loc := filepath.Join(home, "bundled-skills", "daily-note", "SKILL.md")
	srv := newFake(t,
		call("c1", "read", `{"path":"`+loc+`"}`),
		call("c2", "apply_patch", `{"input":"*** Begin Patch\n*** Add File: memory/2026-01-02.md\n+# 2026-01-02\n+- buy milk\n*** End Patch"}`),
		fake.Reply{Text: "Noted."},
	)
	res := reef(t, withFake(home, srv), "note: buy milk\n", "chat")
	if res.code != 0 || !strings.Contains(res.stdout, "Noted.") {
		t.Fatalf("chat: code %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := srv.Script().Requests()
	system := reqs[0].System
	if !strings.Contains(system, "<name>daily-note</name>") || !strings.Contains(system, "<location>"+loc+"</location>") {
		t.Errorf("the prompt does not list daily-note at %s:\n%s", loc, system)
	}
	if !strings.Contains(system, "<name>weather</name>") {
		t.Error("the prompt does not list weather, though web_fetch is offered")
	}
	if got := toolResults(reqs, "read"); len(got) != 1 || !strings.Contains(got[0], "memory/YYYY-MM-DD.md") {
		t.Errorf("read of the bundled skill: %q", got)
	}
	data, err := os.ReadFile(filepath.Join(home, "workspace", "memory", "2026-01-02.md"))
	if err != nil || string(data) != "# 2026-01-02\n- buy milk\n" {
		t.Errorf("apply_patch wrote %q, %v", data, err)
	}
}
