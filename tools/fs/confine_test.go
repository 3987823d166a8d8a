package fs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestConfinement tries every way out of the workspace with every tool.
func TestConfinement(t *testing.T) {
	ws, outside := workspace(t)
	writeFile(t, filepath.Join(ws, "notes.txt"), "hello\n")
	writeFile(t, filepath.Join(ws, "real", "inner.txt"), "inner\n")
	secret := filepath.Join(outside, "secret.txt")
	links := map[string]string{
		"file-link": secret,                         // symlink to a file outside
		"dir-link":  outside,                        // symlink to a folder outside
		"zero-link": "/dev/zero",                    // symlink to a device
		"up-link":   "../outside/secret.txt",        // relative symlink that climbs out
		"self-loop": filepath.Join(ws, "self-loop"), // a loop
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(secret, filepath.Join(ws, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	const escapes = "path escapes the workspace"
	tests := []struct {
		name string
		path string
		err  string // "" means the call must succeed
	}{
		{"dot dot", "../outside/secret.txt", escapes},
		{"dot dot inside a path", "real/../../outside/secret.txt", escapes},
		{"absolute outside", secret, escapes},
		{"absolute system file", "/etc/passwd", escapes},
		{"tilde", "~/notes.txt", escapes},
		{"tilde user", "~root/.bashrc", escapes},
		{"symlink to an outside file", "file-link", escapes},
		{"symlink to an outside dir", "dir-link/secret.txt", escapes},
		{"relative symlink out", "up-link", escapes},
		{"symlink to /dev/zero", "zero-link", escapes},
		{"symlinked parent dir", "dir-link/new/x.txt", escapes},
		{"symlink loop", "self-loop", "symlink"},
		{"hardlink to an outside file", "hard.txt", "hard links"},
		{"fifo", "fifo", "named pipe"},
	}
	write := NewWrite(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, tool := range []struct {
				name string
				res  func() (content string, isErr bool)
			}{
				{"read", func() (string, bool) {
					r := run(t, NewRead(Config{}), ws, args("path", tt.path))
					return r.Content, r.IsError
				}},
				{"write", func() (string, bool) {
					r := run(t, write, ws, args("path", tt.path, "content", "pwned"))
					return r.Content, r.IsError
				}},
				{"edit", func() (string, bool) {
					r := run(t, NewEdit(Config{}), ws, args("path", tt.path, "oldText", "top secret", "newText", "pwned"))
					return r.Content, r.IsError
				}},
			} {
				content, isErr := tool.res()
				if !isErr {
					t.Errorf("%s %q: got success %q, want an error", tool.name, tt.path, content)
				} else if !strings.Contains(content, tt.err) {
					t.Errorf("%s %q: got error %q, want it to mention %q", tool.name, tt.path, content, tt.err)
				}
			}
		})
	}
	if got := readFile(t, secret); got != "top secret\n" {
		t.Errorf("outside file changed to %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Errorf("write created a folder outside the workspace (stat err %v)", err)
	}

	for _, p := range []string{"dir-link", "../outside", outside, "~"} {
		wantErr(t, run(t, NewList(Config{}), ws, args("path", p)), escapes)
	}
	wantErr(t, run(t, NewList(Config{}), ws, args("path", "fifo")), "not a folder")
}

func TestConfinementAllowed(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "real", "inner.txt"), "inner\n")
	if err := os.Symlink("real", filepath.Join(ws, "inner-link")); err != nil {
		t.Fatal(err)
	}
	// os.Root never follows absolute symlinks, even those that point inside.
	if err := os.Symlink(filepath.Join(ws, "real"), filepath.Join(ws, "abs-link")); err != nil {
		t.Fatal(err)
	}
	wantErr(t, run(t, NewRead(Config{}), ws, args("path", "abs-link/inner.txt")), "absolute symlinks are never followed")
	tests := []struct{ name, path string }{
		{"absolute path inside", filepath.Join(ws, "real", "inner.txt")},
		{"dot dot that stays inside", "real/../real/inner.txt"},
		{"symlink that stays inside", "inner-link/inner.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, NewRead(Config{}), ws, args("path", tt.path))
			wantOK(t, res)
			if res.Content != "inner" {
				t.Errorf("got %q, want %q", res.Content, "inner")
			}
		})
	}
	res := run(t, NewWrite(Config{}), ws, args("path", filepath.Join(ws, "abs", "new.txt"), "content", "x"))
	wantOK(t, res, "abs/new.txt")
	if got := readFile(t, filepath.Join(ws, "abs", "new.txt")); got != "x" {
		t.Errorf("got %q, want %q", got, "x")
	}
}

// TestDeviceInside covers a device node that sits in the workspace itself (needs root to create).
func TestDeviceInside(t *testing.T) {
	ws, _ := workspace(t)
	dev := filepath.Join(ws, "zero")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(1<<8|5)); err != nil {
		t.Skipf("cannot create a device node here: %v", err)
	}
	wantErr(t, run(t, NewRead(Config{}), ws, args("path", "zero")), "character device")
	wantErr(t, run(t, NewEdit(Config{}), ws, args("path", "zero", "oldText", "a", "newText", "b")), "character device")
	wantErr(t, run(t, NewWrite(Config{}), ws, args("path", "zero", "content", "a")), "character device")
}

func TestNoWorkspace(t *testing.T) {
	wantErr(t, run(t, NewRead(Config{}), "", args("path", "a")), "no workspace")
}
