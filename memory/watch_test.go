package memory

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pmem "github.com/reefgw/reef/persistence/memory"
)

func paths(r Response) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, res.Path)
	}
	slices.Sort(out)
	return out
}

func scans(t *testing.T, x *Index) int {
	t.Helper()
	st, err := x.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Scans
}

// TestWatcher: with the file watcher, changes made outside reef are seen at the next search
// without a stat scan of every note: new, edited (even keeping size and mtime), deleted and
// renamed notes, notes in new folders, and MEMORY.md at the top.
func TestWatcher(t *testing.T) {
	ws := t.TempDir()
	writeNote(t, ws, "memory/a.md", "colour: orange\n")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(ws, "memory/a.md"), old, old)
	x := newIndex(t, ws, pmem.New(), nil)
	if got := paths(search(t, x, "orange")); !slices.Equal(got, []string{"memory/a.md"}) {
		t.Fatalf("got %v", got)
	}
	if st, _ := x.Status(context.Background()); st.Watching != "inotify" {
		t.Skipf("no file watcher here (%s); TestScanWithoutWatcher covers the fallback", st.Watching)
	}
	base := scans(t, x)
	steps := []struct {
		name  string
		do    func()
		query string
		want  []string
	}{
		{"new note", func() { writeNote(t, ws, "memory/b.md", "the bravo note\n") }, "bravo", []string{"memory/b.md"}},
		{"same size and mtime", func() {
			writeNote(t, ws, "memory/a.md", "colour: purple\n")
			os.Chtimes(filepath.Join(ws, "memory/a.md"), old, old)
		}, "purple", []string{"memory/a.md"}},
		{"deleted", func() { os.Remove(filepath.Join(ws, "memory/b.md")) }, "bravo", nil},
		{"MEMORY.md", func() { writeNote(t, ws, "MEMORY.md", "# Me\n\nthe charlie fact\n") }, "charlie", []string{"MEMORY.md"}},
		{"renamed", func() { os.Rename(filepath.Join(ws, "memory/a.md"), filepath.Join(ws, "memory/c.md")) }, "purple", []string{"memory/c.md"}},
		{"not a note", func() { writeNote(t, ws, "memory/d.txt", "purple\n") }, "purple", []string{"memory/c.md"}},
	}
	for _, s := range steps {
		s.do()
		if got := paths(search(t, x, s.query)); !slices.Equal(got, s.want) {
			t.Fatalf("%s: %q found %v, want %v", s.name, s.query, got, s.want)
		}
	}
	if got := scans(t, x); got != base {
		t.Errorf("%d stat scans for changes the watcher saw, want none", got-base)
	}
	// Folders that come, move and go make the watcher scan once and watch them.
	writeNote(t, ws, "memory/2026/03/deep.md", "the delta note\n")
	if got := paths(search(t, x, "delta")); !slices.Equal(got, []string{"memory/2026/03/deep.md"}) {
		t.Fatalf("a note in new folders: %v", got)
	}
	writeNote(t, ws, "memory/2026/03/deeper.md", "the echo note\n") // in the folder now watched
	os.Rename(filepath.Join(ws, "memory/2026"), filepath.Join(ws, "memory/archive"))
	if got := paths(search(t, x, "delta echo")); !slices.Equal(got, []string{"memory/archive/03/deep.md", "memory/archive/03/deeper.md"}) {
		t.Fatalf("a moved folder: %v", got)
	}
	writeNote(t, ws, "memory/archive/03/foxtrot.md", "the foxtrot note\n") // the moved folder is watched too
	if got := paths(search(t, x, "foxtrot")); !slices.Equal(got, []string{"memory/archive/03/foxtrot.md"}) {
		t.Fatalf("a note in a moved folder: %v", got)
	}
	os.RemoveAll(filepath.Join(ws, "memory"))
	if got := paths(search(t, x, "delta echo foxtrot purple")); got != nil {
		t.Fatalf("memory/ removed: still found %v", got)
	}
	writeNote(t, ws, "memory/again.md", "the golf note\n")
	if got := paths(search(t, x, "golf")); !slices.Equal(got, []string{"memory/again.md"}) {
		t.Fatalf("memory/ made again: %v", got)
	}
	// A safety scan every few minutes, in case the watcher missed something.
	before := scans(t, x)
	now := time.Now().Add(safetyScanEvery + time.Second)
	x.clock = func() time.Time { return now }
	search(t, x, "golf")
	if got := scans(t, x) - before; got != 1 {
		t.Errorf("%d scans after %s, want 1", got, safetyScanEvery)
	}
}

// TestScanWithoutWatcher: without a watcher, a change made outside reef is seen at the
// first search ScanEvery after the last scan; a note the tools touched is seen at once.
func TestScanWithoutWatcher(t *testing.T) {
	ws := t.TempDir()
	writeNote(t, ws, "memory/a.md", "the alpha note\n")
	x := newIndex(t, ws, pmem.New(), nil)
	x.cfg.NoWatch = true
	now := time.Now()
	x.clock = func() time.Time { return now }
	if got := paths(search(t, x, "alpha")); len(got) != 1 {
		t.Fatalf("got %v", got)
	}
	writeNote(t, ws, "memory/b.md", "the bravo note\n")
	if got := paths(search(t, x, "bravo")); got != nil {
		t.Fatalf("seen before ScanEvery: %v (the scan runs every search again)", got)
	}
	writeNote(t, ws, "memory/c.md", "the charlie note\n")
	if err := x.Touch(context.Background(), "memory/c.md"); err != nil {
		t.Fatal(err)
	}
	if got := paths(search(t, x, "charlie")); !slices.Equal(got, []string{"memory/c.md"}) {
		t.Fatalf("a touched note: %v", got)
	}
	now = now.Add(x.cfg.ScanEvery)
	if got := paths(search(t, x, "bravo")); !slices.Equal(got, []string{"memory/b.md"}) {
		t.Fatalf("after ScanEvery: %v", got)
	}
	if st, _ := x.Status(context.Background()); st.Watching != "scan every 2s" {
		t.Errorf("watching %q", st.Watching)
	}
}
