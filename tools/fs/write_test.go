package fs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrite(t *testing.T) {
	ws, _ := workspace(t)
	tests := []struct {
		name    string
		cfg     Config
		args    []byte
		file    string // path under ws to check, when the call succeeds
		want    string // file content
		result  string // part of the result
		wantErr string
	}{
		{name: "creates parents", args: args("path", "a/b/c.txt", "content", "hello"),
			file: "a/b/c.txt", want: "hello", result: "created a/b/c.txt: wrote 5 bytes"},
		{name: "replaces", args: args("path", "a/b/c.txt", "content", "bye"),
			file: "a/b/c.txt", want: "bye", result: "replaced a/b/c.txt: wrote 3 bytes"},
		{name: "file_path alias", args: args("file_path", "alias.txt", "content", "x"), file: "alias.txt", want: "x"},
		{name: "empty content", args: args("path", "empty.txt", "content", ""), file: "empty.txt", want: ""},
		{name: "content missing", args: args("path", "x.txt"), wantErr: "content is required"},
		{name: "too big", cfg: Config{WriteBytes: 4}, args: args("path", "big.txt", "content", "12345"),
			wantErr: "content is 5 bytes, more than the 4 bytes write takes"},
		{name: "onto a folder", args: args("path", "a", "content", "x"), wantErr: "a is a directory"},
		{name: "the workspace itself", args: args("path", ".", "content", "x"), wantErr: "workspace itself"},
		{name: "parent is a file", args: args("path", "a/b/c.txt/d", "content", "x"), wantErr: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, NewWrite(tt.cfg), ws, tt.args)
			if tt.wantErr != "" {
				wantErr(t, res, tt.wantErr)
				return
			}
			wantOK(t, res, tt.result)
			if got := readFile(t, filepath.Join(ws, tt.file)); got != tt.want {
				t.Errorf("file holds %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(ws, "big.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused write left big.txt behind (stat err %v)", err)
	}
}

func TestWriteLeavesNoTempFiles(t *testing.T) {
	ws, _ := workspace(t)
	for i := 0; i < 3; i++ {
		wantOK(t, run(t, NewWrite(Config{}), ws, args("path", "d/f.txt", "content", strings.Repeat("x", i))))
	}
	entries, err := os.ReadDir(filepath.Join(ws, "d"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"f.txt"}, names); diff != "" {
		t.Errorf("folder entries (-want +got):\n%s", diff)
	}
}

func TestWriteKeepsMode(t *testing.T) {
	ws, _ := workspace(t)
	p := filepath.Join(ws, "run.sh")
	writeFile(t, p, "old")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	wantOK(t, run(t, NewWrite(Config{}), ws, args("path", "run.sh", "content", "new")))
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o750 {
		t.Errorf("got mode %v, want %v", got, os.FileMode(0o750))
	}
}
