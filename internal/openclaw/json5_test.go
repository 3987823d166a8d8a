package openclaw

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJSON5(t *testing.T) {
	src := `// a comment
{
  unquoted: 'single \'quoted\' "string"',
  /* block
     comment */ "quoted": [1, +2, .5, 5., 0x1F, -0x10,],
  nested: { $dollar_key: true, none: null, },
  url: "http://example.com/a//b", // not a comment inside a string
  multi: "one \
two",
  esc: "tab\tunicode\u00e9 pair\ud83e\udd9e",
}
`
	var got map[string]any
	if err := DecodeJSON5([]byte(src), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"unquoted": `single 'quoted' "string"`,
		"quoted":   []any{"1", "2", "0.5", "5.0", "31", "-16"},
		"nested":   map[string]any{"$dollar_key": true, "none": nil},
		"url":      "http://example.com/a//b",
		"multi":    "one two",
		"esc":      "tab\tunicodeé pair🦞",
	}
	// numbers decode as json.Number: compare their text
	q := got["quoted"].([]any)
	for i := range q {
		q[i] = q[i].(interface{ String() string }).String()
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("decoded (-want +got):\n%s", d)
	}
}

func TestJSON5Errors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"{\n  a: 'open\n}", "line 2: newline in a string"},
		{"{\n\n /* never closed", "line 3: unterminated /* comment"},
		{"{a: Infinity}", "no JSON equivalent"},
		{"{a: 1,, }", "json5:"},
		{`{"a": "x"`, "json5:"},
	} {
		var v any
		err := DecodeJSON5([]byte(c.src), &v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.src, err, c.want)
		}
	}
}
