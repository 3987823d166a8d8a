package memory

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	pmem "github.com/reefgw/reef/persistence/memory"
)

// TestSharedWorkspaceAcrossNodes: two nodes share one workspace (a network file system, whose
// writes by another machine no local watcher sees) and one database. A note written through
// one node is found by the other's next search.
func TestSharedWorkspaceAcrossNodes(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte("# Notes\n\nThe boat is blue.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := pmem.New()
	node := func() *Index {
		x := New(Config{AgentID: "main", Workspace: ws, Shared: true}, store, zerolog.Nop())
		t.Cleanup(func() { x.Close() })
		return x
	}
	a, b := node(), node()
	if got := search(t, b, "boat"); len(got.Results) != 1 {
		t.Fatalf("b finds %d notes about the boat; want 1", len(got.Results))
	}
	// Through node a, the agent writes a note (the file tools touch a's index only).
	note := filepath.Join(ws, "memory", "2026-12-06.md")
	if err := os.MkdirAll(filepath.Dir(note), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(note, []byte("# Today\n\nThe harbour master is called Ingrid.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Touch(context.Background(), "memory/2026-12-06.md"); err != nil {
		t.Fatal(err)
	}
	if got := search(t, a, "Ingrid"); len(got.Results) != 1 {
		t.Fatalf("a finds %d notes about Ingrid; want 1", len(got.Results))
	}
	got := search(t, b, "Ingrid")
	if len(got.Results) != 1 || got.Results[0].Path != "memory/2026-12-06.md" {
		t.Fatalf("b finds %+v; want the note written through a", got.Results)
	}
	if st, _ := b.Status(context.Background()); st.Watching != "scan at every search (shared workspace)" {
		t.Errorf("b's status says %q", st.Watching)
	}
}
