package termtext

import (
	"strings"
	"testing"
	"unicode"
)

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"Grüße, 你好 👋", "Grüße, 你好 👋"},
		{"\x1b[2K\rMom", "Mom"},
		{"red \x1b[31mtext\x1b[0m", "red text"},
		{"title \x1b]0;pwned\x07after", "title after"},
		{"link \x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "link click"},
		{"dcs \x1bPq#0;2;0;0;0\x1b\\done", "dcs done"},
		{"unterminated \x1b]0;never ends", "unterminated "},
		{"osc cut by \x1b]0;x\x1b[2Kesc", "osc cut by esc"},
		{"two-char \x1b(0box\x1bc", "two-char box"},
		{"lone esc at end \x1b", "lone esc at end "},
		{"c1 csi \u009b2Kgone", "c1 csi gone"},
		{"bell\a del\x7f nul\x00 bs\b", "bell del nul bs"},
		{"\u202eevil\u202c \u2066iso\u2069 \u200fmark", "evil iso mark"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\nb\rc\x1b[1Ad\te"), "a b cd e"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestQuoteAndID(t *testing.T) {
	tests := []struct {
		fn       func(string) string
		in, want string
	}{
		{Quote, "Ada Lovelace", `"Ada Lovelace"`},
		{Quote, "", "-"},
		{Quote, "Mom\" (id 1)", `"Mom\" (id 1)"`},
		{Quote, "\x1b[2K\rMom\n\u202e", `"\x1b[2K\rMom\n\u202e"`},
		{Quote, "李雷", `"李雷"`},
		{ID, "4242", "4242"},
		{ID, "agent:main:telegram:direct:42", "agent:main:telegram:direct:42"},
		{ID, "ou_7d8a6e6df7621556ce0d21922b676706ccs", "ou_7d8a6e6df7621556ce0d21922b676706ccs"},
		{ID, "42 (Mom)", `"42 (Mom)"`},
		{ID, "42\n", `"42\n"`},
		{ID, "", "-"},
	}
	for _, tt := range tests {
		if got := tt.fn(tt.in); got != tt.want {
			t.Errorf("%q -> %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzText: whatever goes in, nothing a terminal acts on comes out.
func FuzzText(f *testing.F) {
	for _, s := range []string{"\x1b[2K\rMom\n\u202e", "\u009b1m", "a\x1b]0;t\x07b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Text(s), Line(s), Quote(s), ID(s)} {
			for _, r := range out {
				if r != '\n' && r != '\t' && (unicode.IsControl(r) || control(r)) {
					t.Fatalf("%q -> %q keeps %U", s, out, r)
				}
			}
		}
		if strings.ContainsAny(Line(s), "\n\t") {
			t.Fatalf("Line(%q) has a line break or tab", s)
		}
	})
}
