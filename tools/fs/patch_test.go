package fs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/tools"
)

func patch(lines ...string) []byte {
	return args("input", "*** Begin Patch\n"+strings.Join(lines, "\n")+"\n*** End Patch\n")
}

// TestPatchOperations: add, delete, move and several hunks in one patch.
func TestPatchOperations(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "src/app.py"), "import os\n\ndef greet():\n    print(\"Hi\")\n\ndef main():\n    greet()\n    return 0\n")
	writeFile(t, filepath.Join(ws, "old.txt"), "bye\n")
	writeFile(t, filepath.Join(ws, "blob.bin"), "\x00\x01binary")
	writeFile(t, filepath.Join(ws, "notes.md"), "one\ntwo\nthree\n")
	res := run(t, NewPatch(Config{}), ws, patch(
		"*** Add File: docs/hello.txt",
		"+Hello",
		"+world",
		"*** Update File: src/app.py",
		"@@ def greet():",
		"-    print(\"Hi\")",
		"+    print(\"Hello, world!\")",
		"@@ def main():",
		"     greet()",
		"-    return 0",
		"+    return 1",
		"*** Delete File: old.txt",
		"*** Delete File: blob.bin",
		"*** Update File: notes.md",
		"*** Move to: archive/notes.md",
		"@@",
		" two",
		"-three",
		"+3",
		"*** End of File",
	))
	wantOK(t, res, "added docs/hello.txt", "updated src/app.py (2 hunks)", "deleted old.txt", "moved notes.md to archive/notes.md")
	for path, want := range map[string]string{
		"docs/hello.txt":   "Hello\nworld\n",
		"src/app.py":       "import os\n\ndef greet():\n    print(\"Hello, world!\")\n\ndef main():\n    greet()\n    return 1\n",
		"archive/notes.md": "one\ntwo\n3\n",
	} {
		if got := readFile(t, filepath.Join(ws, path)); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	for _, gone := range []string{"old.txt", "blob.bin", "notes.md"} {
		if _, err := os.Stat(filepath.Join(ws, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still exists (err %v)", gone, err)
		}
	}
}

// TestPatchAllOrNothing: when one hunk of one file does not apply, no file changes, and the
// error names the file and the hunk.
func TestPatchAllOrNothing(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "a.txt"), "alpha\nbeta\n")
	writeFile(t, filepath.Join(ws, "b.txt"), "one\ntwo\nthree\n")
	writeFile(t, filepath.Join(ws, "c.txt"), "keep me\n")
	res := run(t, NewPatch(Config{}), ws, patch(
		"*** Update File: a.txt",
		"@@",
		"-alpha",
		"+ALPHA",
		"*** Add File: new.txt",
		"+new",
		"*** Delete File: c.txt",
		"*** Update File: b.txt",
		"@@",
		"-one",
		"+1",
		"@@",
		" two",
		"-four",
		"+4",
	))
	wantErr(t, res, "b.txt: hunk 2 (patch line 13): these lines were not found after line 1:\n  two\n  four", "nothing was changed")
	wantErr(t, res, "four")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "alpha\nbeta\n" {
		t.Errorf("a.txt changed: %q", got)
	}
	if got := readFile(t, filepath.Join(ws, "c.txt")); got != "keep me\n" {
		t.Errorf("c.txt changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt was created (err %v)", err)
	}
}

// TestPatchWhitespaceAndCRLF: context matches when only trailing whitespace differs, and a
// file with Windows line ends keeps them.
func TestPatchWhitespaceAndCRLF(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "win.txt"), "first\r\nsecond  \r\nthird\r\n")
	res := run(t, NewPatch(Config{}), ws, patch(
		"*** Update File: win.txt",
		"@@",
		" first",
		"-second",
		"+2nd",
		" third",
	))
	wantOK(t, res, "updated win.txt (1 hunk)")
	if got, want := readFile(t, filepath.Join(ws, "win.txt")), "first\r\n2nd\r\nthird\r\n"; got != want {
		t.Errorf("win.txt = %q, want %q", got, want)
	}
}

func TestPatchRefused(t *testing.T) {
	ws, outside := workspace(t)
	writeFile(t, filepath.Join(ws, "a.txt"), "a\n")
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		patch []byte
		want  string
	}{
		{"dotdot add", patch("*** Add File: ../evil.txt", "+x"), "escapes the workspace"},
		{"absolute delete", patch("*** Delete File: " + filepath.Join(outside, "secret.txt")), "escapes the workspace"},
		{"symlink update", patch("*** Update File: out/secret.txt", "@@", "-top secret", "+mine"), "escapes the workspace"},
		{"symlink add", patch("*** Add File: out/new.txt", "+x"), "escapes the workspace"},
		{"move out", patch("*** Update File: a.txt", "*** Move to: ../a.txt", "@@", "-a", "+b"), "escapes the workspace"},
		{"no begin", args("input", "*** Update File: a.txt\n-a\n+b\n*** End Patch"), "must start with"},
		{"no end", args("input", "*** Begin Patch\n*** Add File: x\n+x\n"), "must end with"},
		{"bad header", patch("*** Frobnicate File: a.txt"), "patch line 2"},
		{"add line without +", patch("*** Add File: x.txt", "oops"), "starts with +"},
		{"missing file", patch("*** Update File: nope.txt", "@@", "-a", "+b"), "no such file"},
		{"twice", patch("*** Update File: a.txt", "@@", "-a", "+b", "*** Delete File: a.txt"), "appears twice"},
		{"empty", patch(), "changes no file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, run(t, NewPatch(Config{}), ws, tt.patch), tt.want)
		})
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "top secret\n" {
		t.Errorf("the outside file changed: %q", got)
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "a\n" {
		t.Errorf("a.txt changed: %q", got)
	}
	for _, p := range []string{filepath.Join(filepath.Dir(ws), "evil.txt"), filepath.Join(outside, "new.txt")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written", p)
		}
	}
}

// TestPatchReportsChanged: every written or removed file reaches the Changed hook.
func TestPatchReportsChanged(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "memory/a.md"), "tea\n")
	var got []string
	cfg := Config{Changed: func(_ context.Context, env tools.Env, rel string) { got = append(got, rel) }}
	res := tools.Run(context.Background(), NewPatch(cfg), tools.Call{Env: tools.Env{Workspace: ws},
		Args: patch("*** Update File: memory/a.md", "*** Move to: memory/b.md", "@@", "-tea", "+coffee")})
	wantOK(t, res, "moved memory/a.md to memory/b.md")
	if want := []string{"memory/b.md", "memory/a.md"}; !slices.Equal(got, want) {
		t.Errorf("Changed got %q, want %q", got, want)
	}
}

func TestParsePatchHunkShapes(t *testing.T) {
	for _, tt := range []struct {
		name, content string
		hunk          []string
		want          string
	}{
		{"first hunk without @@", "a\nb\n", []string{"-a", "+A"}, "A\nb\n"},
		{"pure addition appends", "a\n", []string{"@@", "+b"}, "a\nb\n"},
		{"end of file picks the last match", "x\ny\nx\n", []string{"@@", "-x", "+z", "*** End of File"}, "x\ny\nz\n"},
		{"no final newline", "a\nb", []string{"@@", " a", "-b", "+c"}, "a\nc\n"},
		{"indentation differs", "  x\n", []string{"@@", "-x", "+y"}, "y\n"},
		{"heredoc markers", "a\n", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.hunk == nil {
				ops, err := parsePatch("<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n")
				if err != nil || len(ops) != 1 || ops[0].kind != opDelete {
					t.Fatalf("ops %+v, err %v", ops, err)
				}
				return
			}
			ops, err := parsePatch("*** Begin Patch\n*** Update File: f\n" + strings.Join(tt.hunk, "\n") + "\n*** End Patch")
			if err != nil {
				t.Fatal(err)
			}
			got, err := applyHunks(tt.content, ops[0].hunks)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
