package fs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadOnlyDirs: read and ls open files of a read-only folder by absolute path (the shared
// and bundled skills), confined like the workspace; write does not.
func TestReadOnlyDirs(t *testing.T) {
	ws, outside := workspace(t)
	skills := filepath.Join(filepath.Dir(ws), "skills")
	writeFile(t, filepath.Join(skills, "weather/SKILL.md"), "---\nname: weather\n---\nfetch wttr.in\n")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(skills, "leak.md")); err != nil {
		t.Fatal(err)
	}
	cfg := Config{ReadOnlyDirs: []string{skills}}
	wantOK(t, run(t, NewRead(cfg), ws, args("path", filepath.Join(skills, "weather/SKILL.md"))), "fetch wttr.in")
	wantOK(t, run(t, NewList(cfg), ws, args("path", skills)), "weather/")
	wantErr(t, run(t, NewRead(cfg), ws, args("path", filepath.Join(skills, "leak.md"))), "escapes the workspace")
	wantErr(t, run(t, NewRead(cfg), ws, args("path", filepath.Join(skills, "../outside/secret.txt"))), "escapes the workspace")
	wantErr(t, run(t, NewRead(Config{}), ws, args("path", filepath.Join(skills, "weather/SKILL.md"))), "escapes the workspace")
	wantErr(t, run(t, NewWrite(cfg), ws, args("path", filepath.Join(skills, "weather/SKILL.md"), "content", "x")), "escapes the workspace")
	wantErr(t, run(t, NewPatch(cfg), ws, patch("*** Delete File: "+filepath.Join(skills, "weather/SKILL.md"))), "escapes the workspace")
}
