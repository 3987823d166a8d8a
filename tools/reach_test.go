package tools_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/tools"
)

// TestOpenFileConfines: the one check every path the agent names passes (#39 items 2, 11):
// hard links are refused to everyone; the owner's private files and other people's uploads
// to a guest, also through a symlink inside the workspace; a guest's own upload is allowed.
func TestOpenFileConfines(t *testing.T) {
	ws := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"MEMORY.md", "USER.md", "memory/2026-01-01.md", "inbox/d/owner.pdf", "inbox/d/mine.jpg", "notes.txt"} {
		write(f)
	}
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("s"), 0o644)
	if err := os.Link(outside, filepath.Join(ws, "hard.txt")); err != nil {
		t.Skip(err)
	}
	os.Symlink("MEMORY.md", filepath.Join(ws, "alias.md"))
	owner := tools.Reach{Owner: true}
	guest := tools.Reach{Uploads: []string{"inbox/d/mine.jpg"}}
	for _, c := range []struct {
		reach tools.Reach
		path  string
		ok    bool
		want  string
	}{
		{owner, "MEMORY.md", true, ""},
		{owner, "inbox/d/owner.pdf", true, ""},
		{owner, "hard.txt", false, "hard links"},
		{guest, "hard.txt", false, "hard links"},
		{guest, "notes.txt", true, ""},
		{guest, "inbox/d/mine.jpg", true, ""},
		{guest, "MEMORY.md", false, "not available"},
		{guest, "memory.MD", false, "not available"},
		{guest, "USER.md", false, "not available"},
		{guest, "memory/2026-01-01.md", false, "not available"},
		{guest, "inbox/d/owner.pdf", false, "not available"},
		{guest, "inbox/../MEMORY.md", false, "not available"},
		{guest, filepath.Join(ws, "USER.md"), false, "not available"},
		{guest, "alias.md", false, "not available"},
	} {
		f, _, _, err := tools.OpenFile(ws, c.reach, c.path)
		if f != nil {
			f.Close()
		}
		if c.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("owner %v, %s: err %v, want ok %v (%q)", c.reach.Owner, c.path, err, c.ok, c.want)
		}
		if c.want == "not available" && !errors.Is(err, tools.ErrPrivate) {
			t.Errorf("%s: %v is not ErrPrivate", c.path, err)
		}
	}
	for _, c := range []struct {
		path string
		show bool
	}{{"inbox", true}, {"inbox/d", true}, {"inbox/d/owner.pdf", false}, {"memory", false}, {".", true}, {"MEMORY.md", false}} {
		if got := guest.Shows(c.path); got != c.show {
			t.Errorf("guest.Shows(%s) = %v, want %v", c.path, got, c.show)
		}
	}
}
