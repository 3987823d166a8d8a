package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInitWorkspaceCreatesOnceAndNeverOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	created, err := InitWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md", "memory/", "skills/"}
	if diff := cmp.Diff(want, created); diff != "" {
		t.Fatalf("created (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("dir mode = %v, want 0700", got)
	}
	for _, name := range want {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	// The user edits a file; a second init must keep the edit and create nothing.
	soul := filepath.Join(dir, "SOUL.md")
	if err := os.WriteFile(soul, []byte("my own soul"), 0o600); err != nil {
		t.Fatal(err)
	}
	created, err = InitWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 0 {
		t.Errorf("second init created %v, want nothing", created)
	}
	if b, _ := os.ReadFile(soul); string(b) != "my own soul" {
		t.Errorf("SOUL.md = %q, want the user's text kept", b)
	}
}

func TestInitWorkspaceBootstrapOnlyWhenNew(t *testing.T) {
	tests := []struct {
		name     string
		existing map[string]string // files present before InitWorkspace
		wantBoot bool
	}{
		{"missing dir", nil, true},
		{"empty dir", map[string]string{}, true},
		{"unrelated file only", map[string]string{"notes.txt": "x"}, true},
		{"has AGENTS.md", map[string]string{"AGENTS.md": "mine"}, false},
		{"has MEMORY.md", map[string]string{"MEMORY.md": "facts"}, false},
		{"has memory dir", map[string]string{"memory/2026-01-01.md": "log"}, false},
		{"ritual done: everything but BOOTSTRAP.md", map[string]string{"AGENTS.md": "a", "SOUL.md": "s", "USER.md": "u", "IDENTITY.md": "i", "TOOLS.md": "t", "HEARTBEAT.md": "h"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ws")
			if tt.existing != nil {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for name, text := range tt.existing {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			created, err := InitWorkspace(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(dir, "BOOTSTRAP.md"))
			if got := statErr == nil; got != tt.wantBoot {
				t.Errorf("BOOTSTRAP.md exists = %v, want %v (created %v)", got, tt.wantBoot, created)
			}
			for name, text := range tt.existing {
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != text {
					t.Errorf("%s = %q, want %q (overwritten)", name, b, text)
				}
			}
		})
	}
}

func TestInitWorkspaceKeepsSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target.md")
	// A dangling symlink must not be followed to create a file outside the workspace.
	if err := os.Symlink(outside, filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	if _, err := InitWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("InitWorkspace wrote through a symlink to a file outside the workspace")
	}
}

func TestInitWorkspaceErrors(t *testing.T) {
	if _, err := InitWorkspace(""); err == nil {
		t.Error("empty dir: got nil error")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InitWorkspace(file); err == nil || !strings.HasPrefix(err.Error(), "agent: init workspace") {
		t.Errorf("dir is a file: err = %v, want an agent: init workspace error", err)
	}
}

func TestStarterTexts(t *testing.T) {
	for _, name := range append(starterFiles, FileBootstrap) {
		text, ok := StarterText(name)
		if !ok || strings.TrimSpace(text) == "" {
			t.Errorf("StarterText(%q) = %q, %v; want text", name, text, ok)
		}
	}
	if _, ok := StarterText("MEMORY.md"); ok {
		t.Error("StarterText(MEMORY.md) ok, want no starter")
	}
	heartbeat, _ := StarterText(FileHeartbeat)
	if !HeartbeatEmpty(heartbeat) {
		t.Error("starter HEARTBEAT.md has a task; heartbeats would not be skipped")
	}
	boot, _ := StarterText(FileBootstrap)
	for _, want := range []string{"IDENTITY.md", "USER.md", "rm BOOTSTRAP.md"} {
		if !strings.Contains(boot, want) {
			t.Errorf("BOOTSTRAP.md does not mention %q", want)
		}
	}
}
