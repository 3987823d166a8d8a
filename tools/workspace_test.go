package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkspacePath(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		p, want, err string
	}{
		{p: "a.txt", want: "a.txt"},
		{p: ".", want: "."},
		{p: "./a/../b", want: "b"},
		{p: filepath.Join(ws, "x", "y"), want: "x/y"},
		{p: ws, want: "."},
		{p: "..", err: "path escapes the workspace"},
		{p: "../x", err: "path escapes the workspace"},
		{p: "a/../../x", err: "path escapes the workspace"},
		{p: "/etc/passwd", err: "path escapes the workspace: /etc/passwd is outside it"},
		{p: filepath.Dir(ws), err: "path escapes the workspace"},
		{p: ws + "-sibling/x", err: "path escapes the workspace"},
		{p: "~", err: "~ is not expanded"},
		{p: "~/a", err: "~ is not expanded"},
		{p: "~root/a", err: "~ is not expanded"},
		{p: "", err: "path is empty"},
		{p: "a\x00b", err: "NUL"},
	}
	for _, tt := range tests {
		got, err := WorkspacePath(ws, tt.p)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("WorkspacePath(%q) = %q, %v; want an error containing %q", tt.p, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("WorkspacePath(%q) = %q, %v; want %q", tt.p, got, err, tt.want)
		}
	}
	if _, err := WorkspacePath("", "a"); err == nil {
		t.Error("an empty workspace was accepted")
	}
}

// An absolute path through the workspace's real location is inside too.
func TestWorkspacePathThroughSymlinkedWorkspace(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	got, err := WorkspacePath(link, filepath.Join(real, "a.txt"))
	if err != nil || got != "a.txt" {
		t.Errorf("got %q, %v; want a.txt", got, err)
	}
}

func TestExplainPathError(t *testing.T) {
	ws := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Open("out/passwd")
	got := ExplainPathError("out/passwd", err)
	if !errors.Is(got, ErrEscapes) || !strings.HasPrefix(got.Error(), "path escapes the workspace: out/passwd") {
		t.Errorf("got %v, want an escape error", got)
	}
	_, err = root.Open("missing")
	if got := ExplainPathError("missing", err).Error(); got != "no such file or directory: missing" {
		t.Errorf("got %q", got)
	}
}
