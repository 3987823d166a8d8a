package fs

import (
	"path/filepath"
	"testing"
)

func TestEdit(t *testing.T) {
	const original = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n// x\n// x\n"
	tests := []struct {
		name    string
		file    string // initial content; default original
		args    []byte
		want    string // file afterwards
		result  string
		wantErr []string
	}{
		{name: "unique", args: args("path", "f.go", "oldText", "\tprintln(\"hi\")", "newText", "\tprintln(\"bye\")\n\treturn"),
			want: "package main\n\nfunc main() {\n\tprintln(\"bye\")\n\treturn\n}\n// x\n// x\n", result: "edited f.go: replaced line 4 with 2 lines"},
		{name: "aliases", args: args("file_path", "f.go", "old_string", "func main() {\n", "new_string", "func run() {\n"),
			want: "package main\n\nfunc run() {\n\tprintln(\"hi\")\n}\n// x\n// x\n", result: "replaced lines 3-4 with 2 lines"},
		{name: "delete", args: args("path", "f.go", "oldText", "// x\n// x\n", "newText", ""),
			want: "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"},
		{name: "crlf file", file: "a\r\nb\r\nc\r\n", args: args("path", "f.go", "oldText", "a\nb", "newText", "A\nB"),
			want: "A\r\nB\r\nc\r\n"},
		{name: "not found with a close line", args: args("path", "f.go", "oldText", "func  main(){", "newText", "x"),
			wantErr: []string{"oldText was not found in f.go", "Line 3", `"func main() {"`}},
		{name: "not found at all", args: args("path", "f.go", "oldText", "nothing like it", "newText", "x"),
			wantErr: []string{"oldText was not found in f.go", "copy the text exactly"}},
		{name: "several matches", args: args("path", "f.go", "oldText", "// x", "newText", "// y"),
			wantErr: []string{"occurs 2 times in f.go", "include more of the surrounding lines"}},
		{name: "same text", args: args("path", "f.go", "oldText", "a", "newText", "a"), wantErr: []string{"nothing would change"}},
		{name: "empty oldText", args: args("path", "f.go", "oldText", "", "newText", "a"), wantErr: []string{"oldText is empty"}},
		{name: "oldText missing", args: args("path", "f.go", "newText", "a"), wantErr: []string{"oldText (or old_string) is required"}},
		{name: "conflicting aliases", args: args("path", "f.go", "oldText", "a", "old_string", "b", "newText", "c"),
			wantErr: []string{"not both"}},
		{name: "missing file", args: args("path", "nope.go", "oldText", "a", "newText", "b"), wantErr: []string{"no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, _ := workspace(t)
			if tt.file == "" {
				tt.file = original
			}
			writeFile(t, filepath.Join(ws, "f.go"), tt.file)
			res := run(t, NewEdit(Config{}), ws, tt.args)
			if tt.wantErr != nil {
				wantErr(t, res, tt.wantErr...)
				if got := readFile(t, filepath.Join(ws, "f.go")); got != tt.file {
					t.Errorf("a failed edit changed the file to %q", got)
				}
				return
			}
			wantOK(t, res, tt.result)
			if got := readFile(t, filepath.Join(ws, "f.go")); got != tt.want {
				t.Errorf("file holds\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
