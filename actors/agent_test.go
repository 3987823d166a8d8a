package actors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStablePromptFollowsTheWorkspace: the cached prompt prefix is reused while the workspace
// is unchanged, and a file a tool changed is in the very next prompt.
func TestStablePromptFollowsTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	soul := filepath.Join(dir, "SOUL.md")
	if err := os.WriteFile(soul, []byte("You like herons."), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte("Private: the door code."), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &Agent{ID: "main", Name: "Reef", Workspace: dir}
	first, tokens := a.stablePrompt("direct", true, a.Policy, redactor{})
	if !strings.Contains(first, "You like herons.") || tokens == 0 {
		t.Fatalf("prefix lacks SOUL.md or its estimate (%d tokens):\n%s", tokens, first)
	}
	if again, _ := a.stablePrompt("direct", true, a.Policy, redactor{}); again != first {
		t.Fatal("an unchanged workspace rebuilt a different prefix")
	}
	if err := os.WriteFile(soul, []byte("You like otters."), 0o600); err != nil {
		t.Fatal(err)
	}
	a.forgetWorkspace() // what a Turn does after a tool ran
	next, _ := a.stablePrompt("direct", true, a.Policy, redactor{})
	if !strings.Contains(next, "You like otters.") || strings.Contains(next, "herons") {
		t.Fatalf("after the change the prefix is:\n%s", next)
	}
	group, _ := a.stablePrompt("group", true, a.Policy, redactor{})
	if !strings.Contains(next, "the door code") || strings.Contains(group, "the door code") {
		t.Error("MEMORY.md must be in a direct chat's prefix and out of a group's")
	}
}
