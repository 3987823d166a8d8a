package tools

import (
	"strings"
	"testing"
)

type sampleArgs struct {
	Path   string `json:"path"`
	Limit  int    `json:"limit,omitempty"`
	Hidden string `json:"-"`
	embedded
}

type embedded struct {
	FilePath string `json:"file_path"`
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want sampleArgs
		err  string // part of the error; "" for success
	}{
		{name: "empty", raw: "", want: sampleArgs{}},
		{name: "blank", raw: " \n\t", want: sampleArgs{}},
		{name: "null", raw: "null", want: sampleArgs{}},
		{name: "object", raw: `{"path":"a","limit":3,"file_path":"b"}`,
			want: sampleArgs{Path: "a", Limit: 3, embedded: embedded{FilePath: "b"}}},
		{name: "case-insensitive like encoding/json", raw: `{"Path":"a"}`, want: sampleArgs{Path: "a"}},
		{name: "malformed", raw: `{"path": "a"`, err: "arguments are not valid JSON: unexpected end of input"},
		{name: "bad character", raw: `{path: 1}`, err: "arguments are not valid JSON: invalid character 'p'"},
		{name: "unknown field", raw: `{"path":"a","lines":3}`, err: `unknown argument "lines"; accepted: file_path, limit, path`},
		{name: "unknown fields", raw: `{"b":1,"a":2}`, err: `unknown arguments "a", "b"; accepted: file_path, limit, path`},
		{name: "ignored field is unknown", raw: `{"Hidden":"x"}`, err: `unknown argument "Hidden"`},
		{name: "trailing object", raw: `{"path":"a"}{"path":"b"}`, err: "trailing data"},
		{name: "trailing garbage", raw: `{"path":"a"} x`, err: "trailing data"},
		{name: "not an object", raw: `["a"]`, err: "arguments must be a JSON object"},
		{name: "a string", raw: `"path"`, err: "arguments must be a JSON object"},
		{name: "wrong type", raw: `{"limit":"ten"}`, err: `argument "limit" must be an integer, not string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sampleArgs
			err := DecodeArgs([]byte(tt.raw), &got)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v", err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeArgsMap(t *testing.T) {
	var m map[string]any
	if err := DecodeArgs([]byte(`{"anything":1}`), &m); err != nil || m["anything"] != 1.0 {
		t.Errorf("got %v, %v; want the map decoded", m, err)
	}
}
