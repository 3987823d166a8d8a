package slack_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reefgw/reef/channels/slack"
)

func TestMrkdwn(t *testing.T) {
	cases := []struct{ in, want string }{
		{"**bold** and __also__", "*bold* and *also*"},
		{"*italic* and _italic_", "_italic_ and _italic_"},
		{"~~gone~~", "~gone~"},
		{"a & b < c > d", "a &amp; b &lt; c &gt; d"},
		{"`x <y> & **z**`", "`x &lt;y&gt; &amp; **z**`"},
		{"see [the docs](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&amp;c=2|the docs>"},
		{"[evil](javascript:alert(1))", "[evil](javascript:alert(1))"},
		{"# Title", "*Title*"},
		{"- one\n* two\n  - nested", "• one\n• two\n  • nested"},
		{"1. first\n2. second", "1. first\n2. second"},
		{"```go\nif a < b && c {\n```", "```\nif a &lt; b &amp;&amp; c {\n```"},
		{"> quoted **text**", "&gt; quoted *text*"},
		{"<@U123> <!channel>", "&lt;@U123&gt; &lt;!channel&gt;"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"**中文** _ü_ 😀 <a>", "*中文* _ü_ 😀 &lt;a&gt;"},
		{"***both*** snake_case_name", "*_both_* snake_case_name"},
		{"[a|b](https://x.test/?q=1|2) <https://y.test>", "<https://x.test/?q=1%7C2|a¦b> <https://y.test>"},
		{"**[docs](https://x.test)**", "*<https://x.test|docs>*"},
	}
	for _, tc := range cases {
		if got := slack.Mrkdwn(tc.in); got != tc.want {
			t.Errorf("Mrkdwn(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzChunks(f *testing.F) {
	f.Add("hello **world**")
	f.Add(strings.Repeat("a&<>", 3000))
	f.Add("```\n" + strings.Repeat("x := 1 < 2\n", 900) + "```")
	f.Add(strings.Repeat("😀 中文 ", 2000))
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, c := range slack.Chunks(s) {
			if n := utf8.RuneCountInString(c); n > slack.MaxMessage {
				t.Fatalf("a chunk of %d characters", n)
			}
			if !utf8.ValidString(c) {
				t.Fatal("a chunk that is not UTF-8")
			}
			if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(c, "&amp;", ""), "&lt;", ""), "&gt;", ""), "<") &&
				!strings.Contains(s, "](") && !strings.Contains(strings.ToLower(s), "<http") && !strings.Contains(strings.ToLower(s), "<mailto") {
				t.Fatalf("an unescaped < in %q", c)
			}
		}
	})
}
