package fs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestList(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "b.txt"), "12345")
	writeFile(t, filepath.Join(ws, "a", "x.md"), "x")
	writeFile(t, filepath.Join(ws, "c", "big.bin"), string(make([]byte, 20<<10)))
	if err := os.Symlink("b.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		args []byte
		want string
		err  string
	}{
		{name: "default is the workspace", args: []byte(``), want: "a/\nb.txt (5 bytes)\nc/\nempty/\nlink -> b.txt"},
		{name: "subfolder", args: args("path", "c"), want: "big.bin (20 KB)"},
		{name: "file_path alias", args: args("file_path", "a"), want: "x.md (1 byte)"},
		{name: "empty folder", args: args("path", "empty"), want: "[empty is empty]"},
		{name: "cut", cfg: Config{ListEntries: 2}, args: args("path", "."),
			want: "a/\nb.txt (5 bytes)\n\n[showing 2 of 5 entries; list a subfolder or read a file by name to see more]"},
		{name: "a file", args: args("path", "b.txt"), err: "b.txt is not a folder"},
		{name: "missing", args: args("path", "nope"), err: "no such file or directory: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, NewList(tt.cfg), ws, tt.args)
			if tt.err != "" {
				wantErr(t, res, tt.err)
				return
			}
			wantOK(t, res)
			if res.Content != tt.want {
				t.Errorf("got\n%s\nwant\n%s", res.Content, tt.want)
			}
		})
	}
}
