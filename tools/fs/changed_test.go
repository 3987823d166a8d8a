package fs

import (
	"context"
	"slices"
	"testing"

	"github.com/reefgw/reef/tools"
)

// TestChangedReportsWrites: write and edit report the file they changed (so the memory index
// re-reads it at once); a refused call reports nothing.
func TestChangedReportsWrites(t *testing.T) {
	ws, _ := workspace(t)
	var got []string
	cfg := Config{Changed: func(_ context.Context, env tools.Env, rel string) {
		got = append(got, env.AgentID+":"+rel)
	}}
	env := tools.Env{Workspace: ws, AgentID: "main"}
	run := func(tool tools.Tool, args string) tools.Result {
		return tools.Run(context.Background(), tool, tools.Call{Args: []byte(args), Env: env})
	}
	if r := run(NewWrite(cfg), `{"path":"memory/prefs.md","content":"tea\n"}`); r.IsError {
		t.Fatal(r.Content)
	}
	if r := run(NewEdit(cfg), `{"path":"memory/prefs.md","oldText":"tea","newText":"coffee"}`); r.IsError {
		t.Fatal(r.Content)
	}
	if r := run(NewWrite(cfg), `{"path":"../out.md","content":"x"}`); !r.IsError {
		t.Fatal("an escape was written")
	}
	if r := run(NewEdit(cfg), `{"path":"memory/prefs.md","oldText":"nope","newText":"x"}`); !r.IsError {
		t.Fatal("a failed edit succeeded")
	}
	if want := []string{"main:memory/prefs.md", "main:memory/prefs.md"}; !slices.Equal(got, want) {
		t.Errorf("Changed got %q, want %q", got, want)
	}
}
