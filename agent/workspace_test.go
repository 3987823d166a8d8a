package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// writeFiles creates files (workspace-relative name → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func fileNames(ws Workspace) []string {
	var names []string
	for _, f := range ws.Files {
		names = append(names, f.Name)
	}
	return names
}

func TestLoadWorkspaceOrderAndBootstrap(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"memory.md": "lower-case memory", "USER.md": "user", "AGENTS.md": "agents", "BOOTSTRAP.md": "boot",
		"SOUL.md": "soul", "HEARTBEAT.md": "beat", "IDENTITY.md": "id", "TOOLS.md": "tools",
		"EMPTY.md": "", "notes.md": "not injected",
	})
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md"}
	// On a case-insensitive file system memory.md is found as MEMORY.md.
	if got := fileNames(ws); got[len(got)-1] != "MEMORY.md" && got[len(got)-1] != "memory.md" {
		t.Errorf("last file = %q, want the memory file", got[len(got)-1])
	} else if diff := cmp.Diff(want, got[:len(got)-1]); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if !ws.Bootstrap {
		t.Error("Bootstrap = false with BOOTSTRAP.md present")
	}
	if ws.Files[0].Content != "agents" || ws.Files[0].Size != len("agents") || ws.Files[0].Truncated {
		t.Errorf("AGENTS.md = %+v", ws.Files[0])
	}
	if len(ws.Warnings) != 0 {
		t.Errorf("warnings = %q, want none", ws.Warnings)
	}
}

func TestLoadWorkspacePrefersUpperCaseMemory(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"MEMORY.md": "upper"})
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Files) != 1 || ws.Files[0].Name != "MEMORY.md" || ws.Files[0].Content != "upper" || ws.Bootstrap {
		t.Errorf("files = %+v, bootstrap %v", ws.Files, ws.Bootstrap)
	}
}

func TestLoadWorkspaceMissingDir(t *testing.T) {
	if _, err := LoadWorkspace(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("missing dir: got nil error")
	}
}

func TestLoadWorkspacePerFileCap(t *testing.T) {
	head, tail := strings.Repeat("h", 30_000), strings.Repeat("t", 10_000)
	tests := []struct {
		name      string
		text      string
		truncated bool
	}{
		{"under cap", strings.Repeat("a", MaxFileChars), false},
		{"over cap", head + tail, true},
		{"over cap multibyte", strings.Repeat("日本語", 10_000), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"AGENTS.md": tt.text})
			ws, err := LoadWorkspace(dir)
			if err != nil {
				t.Fatal(err)
			}
			f := ws.Files[0]
			if f.Truncated != tt.truncated {
				t.Fatalf("Truncated = %v, want %v", f.Truncated, tt.truncated)
			}
			if n := utf8.RuneCountInString(f.Content); n > MaxFileChars {
				t.Errorf("content has %d characters, cap %d", n, MaxFileChars)
			}
			if f.Size != len(tt.text) {
				t.Errorf("Size = %d, want %d", f.Size, len(tt.text))
			}
			if !tt.truncated {
				if f.Content != tt.text {
					t.Error("content changed although under the cap")
				}
				return
			}
			checkTruncated(t, f, tt.text, MaxFileChars)
			if len(ws.Warnings) != 1 || !strings.Contains(ws.Warnings[0], "truncated") {
				t.Errorf("warnings = %q, want one truncation warning", ws.Warnings)
			}
		})
	}
}

// checkTruncated asserts the head (~70%), tail (~20%) and notice of a truncated file.
func checkTruncated(t *testing.T, f File, original string, limit int) {
	t.Helper()
	before, after, ok := strings.Cut(f.Content, "\n\n[…")
	if !ok {
		t.Fatalf("no truncation notice in %q…", f.Content[:80])
	}
	if !strings.Contains(after, f.Name+" is truncated") || !strings.Contains(after, "read tool") {
		t.Errorf("notice %q does not name the file and the read tool", after[:min(len(after), 200)])
	}
	_, tailPart, _ := strings.Cut(after, "]\n\n")
	if !strings.HasPrefix(original, before) || !strings.HasSuffix(original, tailPart) {
		t.Error("kept parts are not the file's head and tail")
	}
	if h := utf8.RuneCountInString(before); h < limit*6/10 || h > limit*7/10 {
		t.Errorf("head = %d characters, want about 70%% of %d", h, limit)
	}
	if tl := utf8.RuneCountInString(tailPart); tl < limit*15/100 || tl > limit*2/10 {
		t.Errorf("tail = %d characters, want about 20%% of %d", tl, limit)
	}
}

func TestLoadWorkspaceTotalCap(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 19_000)
	writeFiles(t, dir, map[string]string{
		"AGENTS.md": big, "SOUL.md": big, "TOOLS.md": big, // 57,000
		"IDENTITY.md": strings.Repeat("y", 5_000), // only 3,000 left: truncated
		"USER.md":     "no budget left",           // skipped with a warning
	})
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range ws.Files {
		total += utf8.RuneCountInString(f.Content)
	}
	if total > MaxTotalChars {
		t.Errorf("total = %d characters, cap %d", total, MaxTotalChars)
	}
	if diff := cmp.Diff([]string{"AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md"}, fileNames(ws)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if id := ws.Files[3]; !id.Truncated {
		t.Error("IDENTITY.md not truncated, want it cut to the 3,000 characters left")
	} else {
		checkTruncated(t, id, strings.Repeat("y", 5_000), MaxTotalChars-57_000)
	}
	if !strings.Contains(strings.Join(ws.Warnings, "\n"), "USER.md: not loaded") {
		t.Errorf("warnings = %q, want USER.md skipped", ws.Warnings)
	}
}

func TestLoadWorkspaceHugeFileReadsHeadAndTail(t *testing.T) {
	dir := t.TempDir()
	text := "START" + strings.Repeat("m", 3<<20) + "END"
	writeFiles(t, dir, map[string]string{"MEMORY.md": text})
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := ws.Files[0]
	if !f.Truncated || f.Size != len(text) || !strings.HasPrefix(f.Content, "START") || !strings.HasSuffix(f.Content, "END") {
		t.Errorf("huge file: truncated %v, size %d, head %q, tail %q", f.Truncated, f.Size, f.Content[:5], f.Content[len(f.Content)-3:])
	}
	if n := utf8.RuneCountInString(f.Content); n > MaxFileChars {
		t.Errorf("content has %d characters, cap %d", n, MaxFileChars)
	}
}

func TestLoadWorkspaceSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.md": "TOP SECRET"})
	writeFiles(t, dir, map[string]string{"docs/soul.md": "inside soul"})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	if err := os.Symlink("../"+filepath.Base(outside)+"/secret.md", filepath.Join(dir, "USER.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/soul.md", filepath.Join(dir, "SOUL.md")); err != nil {
		t.Fatal(err)
	}
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ws.Files {
		if strings.Contains(f.Content, "TOP SECRET") {
			t.Errorf("%s: a symlink pulled in a file from outside the workspace", f.Name)
		}
	}
	if diff := cmp.Diff([]string{"SOUL.md"}, fileNames(ws)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	warnings := strings.Join(ws.Warnings, "\n")
	if !strings.Contains(warnings, "AGENTS.md: not loaded") || !strings.Contains(warnings, "USER.md: not loaded") {
		t.Errorf("warnings = %q, want AGENTS.md and USER.md not loaded", ws.Warnings)
	}
}

func TestLoadWorkspaceInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"AGENTS.md": "ok \xff\xfe bytes"})
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.Files[0].Content; !utf8.ValidString(got) || got != "ok \uFFFD bytes" {
		t.Errorf("content = %q, want invalid bytes replaced", got)
	}
}
