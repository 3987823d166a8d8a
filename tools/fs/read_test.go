package fs

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "ten.txt"), numbered(10))
	writeFile(t, filepath.Join(ws, "noeol.txt"), "a\nb")
	writeFile(t, filepath.Join(ws, "crlf.txt"), "a\r\nb\r\n")
	writeFile(t, filepath.Join(ws, "empty.txt"), "")
	writeFile(t, filepath.Join(ws, "long.txt"), strings.Repeat("x", 25)+"\nshort\n")
	writeFile(t, filepath.Join(ws, "wide.txt"), strings.Repeat("é", 30)+"\n")
	writeFile(t, filepath.Join(ws, "bin.dat"), "ab\x00cd")
	tests := []struct {
		name string
		cfg  Config
		args []byte
		want string // exact content
		err  string // or part of the error
	}{
		{name: "whole file", args: args("path", "ten.txt"), want: strings.TrimSuffix(numbered(10), "\n")},
		{name: "offset and limit", args: args("path", "ten.txt", "offset", 3, "limit", 2),
			want: "line3\nline4\n\n[lines 3-4 of 10; call read with offset=5 to continue]"},
		{name: "offset to the end", args: args("path", "ten.txt", "offset", 9), want: "line9\nline10"},
		{name: "default limit from config", cfg: Config{ReadLines: 4}, args: args("path", "ten.txt"),
			want: "line1\nline2\nline3\nline4\n\n[lines 1-4 of 10; call read with offset=5 to continue]"},
		{name: "limit above the maximum is capped", cfg: Config{ReadLines: 2}, args: args("path", "ten.txt", "limit", 50),
			want: "line1\nline2\n\n[lines 1-2 of 10; call read with offset=3 to continue]"},
		{name: "byte cap", cfg: Config{ReadBytes: 17}, args: args("path", "ten.txt"),
			want: "line1\nline2\nline3\n\n[lines 1-3 of 10; output capped at 17 bytes; call read with offset=4 to continue]"},
		{name: "file_path alias", args: args("file_path", "noeol.txt"), want: "a\nb"},
		{name: "crlf", args: args("path", "crlf.txt"), want: "a\nb"},
		{name: "empty", args: args("path", "empty.txt"), want: "[empty.txt is empty]"},
		{name: "long line cut", cfg: Config{LineChars: 10}, args: args("path", "long.txt"),
			want: "xxxxxxxxxx […line cut after 10 characters]\nshort"},
		{name: "multibyte line cut on a rune", cfg: Config{LineChars: 4}, args: args("path", "wide.txt"),
			want: "éééé […line cut after 4 characters]"},
		{name: "binary", args: args("path", "bin.dat"), err: "bin.dat is a binary file (5 bytes)"},
		{name: "offset past the end", args: args("path", "ten.txt", "offset", 11), err: "past the end of ten.txt, which has 10 lines"},
		{name: "negative offset", args: args("path", "ten.txt", "offset", -1), err: "offset must be 1 or more"},
		{name: "missing", args: args("path", "nope.txt"), err: "no such file or directory: nope.txt"},
		{name: "directory", args: args("path", "."), err: "is a directory; use ls"},
		{name: "no path", args: []byte(`{}`), err: "path is required"},
		{name: "both path names differ", args: args("path", "a", "file_path", "b"), err: "not both"},
		{name: "malformed", args: []byte(`{"path":`), err: "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, NewRead(tt.cfg), ws, tt.args)
			if tt.err != "" {
				wantErr(t, res, tt.err)
				return
			}
			wantOK(t, res)
			if res.Content != tt.want {
				t.Errorf("got\n%q\nwant\n%q", res.Content, tt.want)
			}
		})
	}
}

func TestReadContinues(t *testing.T) {
	ws, _ := workspace(t)
	writeFile(t, filepath.Join(ws, "big.txt"), numbered(5400))
	res := run(t, NewRead(Config{}), ws, args("path", "big.txt"))
	wantOK(t, res, "line2000\n\n[lines 1-2000 of 5400; call read with offset=2001 to continue]")
	res = run(t, NewRead(Config{}), ws, args("path", "big.txt", "offset", 4001))
	wantOK(t, res, "line4001\n", "line5400")
	if strings.Contains(res.Content, "[lines") {
		t.Errorf("last window %q has a continuation notice", res.Content[len(res.Content)-80:])
	}
}
