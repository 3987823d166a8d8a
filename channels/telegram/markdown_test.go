package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

func TestRenderHTML(t *testing.T) {
	tests := []struct{ name, md, want string }{
		{"plain", "hello world", "hello world"},
		{"escapes", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"bold", "**bold** and __also__", "<b>bold</b> and <b>also</b>"},
		{"italic", "*it* and _it_", "<i>it</i> and <i>it</i>"},
		{"bold italic", "***both***", "<b><i>both</i></b>"},
		{"nested", "*a **b** c*", "<i>a <b>b</b> c</i>"},
		{"strike", "~~gone~~", "<s>gone</s>"},
		{"snake_case stays", "my_var_name and 2*3", "my_var_name and 2*3"},
		{"unclosed stays", "**not closed and *neither", "**not closed and *neither"},
		{"spaced stars stay", "a * b * c", "a * b * c"},
		{"inline code", "run `a<b && c` now", "run <code>a&lt;b &amp;&amp; c</code> now"},
		{"code keeps stars", "`**x**`", "<code>**x**</code>"},
		{"double backtick code", "``a ` b``", "<code>a ` b</code>"},
		{"fence with language", "```go\nif a < b {\n}\n```", "<pre><code class=\"language-go\">if a &lt; b {\n}</code></pre>"},
		{"fence without language", "```\n**raw**\n```", "<pre>**raw**</pre>"},
		{"unclosed fence", "```py\nprint(1)", "<pre><code class=\"language-py\">print(1)</code></pre>"},
		{"fence language sanitised", "```a\"><b>\nx\n```", "<pre><code class=\"language-ab\">x</code></pre>"},
		{"link", "see [the docs](https://example.com/a?b=1&c=2)", "see <a href=\"https://example.com/a?b=1&amp;c=2\">the docs</a>"},
		{"link with formatting", "[**bold** link](https://x.io)", "<a href=\"https://x.io\"><b>bold</b> link</a>"},
		{"link with parens", "[wiki](https://en.wikipedia.org/wiki/Go_(language))", "<a href=\"https://en.wikipedia.org/wiki/Go_(language)\">wiki</a>"},
		{"javascript link refused", "[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"quote in href", `[x](https://a.b/"c)`, `<a href="https://a.b/&quot;c">x</a>`},
		{"autolink", "<https://example.com>", "https://example.com"},
		{"heading", "## Title *here*", "<b>Title <i>here</i></b>"},
		{"bullets", "- one\n  * two", "• one\n  • two"},
		{"rule", "---", "──────────"},
		{"quote", "> quoted *text*\n> more\nafter", "<blockquote>quoted <i>text</i>\nmore</blockquote>\nafter"},
		{"backslash escape", `\*not italic\* \<tag\>`, "*not italic* &lt;tag&gt;"},
		{"emoji", "😀 **👍🏽 ok**", "😀 <b>👍🏽 ok</b>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RenderHTML(tt.md)
			if got != tt.want {
				t.Errorf("RenderHTML(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
			if _, err := telegramtest.ParseHTML(got); err != nil {
				t.Errorf("Telegram would refuse %q: %v", got, err)
			}
		})
	}
}

func TestChunksEmojiHeavy(t *testing.T) {
	inputs := map[string]string{
		"emoji":          strings.Repeat("😀👍🏽🇩🇪 ", 3000),
		"family zwj":     strings.Repeat("👨‍👩‍👧‍👦", 2000),
		"escapes grow":   strings.Repeat("<&>", 5000),
		"code and emoji": "```python\n" + strings.Repeat("print('😀 & <x>')\n", 800) + "```\n" + strings.Repeat("**b** ", 2000),
		"one long line":  strings.Repeat("a&", 9000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			chunks := Chunks(in)
			if len(chunks) < 2 {
				t.Fatalf("%d chunks, want several", len(chunks))
			}
			for i, c := range chunks {
				shown, err := telegramtest.ParseHTML(c)
				if err != nil {
					t.Errorf("chunk %d: Telegram would refuse it: %v", i, err)
				}
				if n := channels.UTF16(shown); n > MaxMessage {
					t.Errorf("chunk %d shows %d UTF-16 units, over %d", i, n, MaxMessage)
				}
			}
		})
	}
}

// FuzzChunks checks that rendering and chunking any text gives messages Telegram accepts
// (valid HTML, at most 4096 UTF-16 units), and that text without Markdown syntax arrives
// whole: the chunks, as the user sees them, concatenate back to the input.
func FuzzChunks(f *testing.F) {
	f.Add("hello **world**", 1)
	f.Add("```go\nx := 1\n```\n"+strings.Repeat("😀 ", 3000), 3)
	f.Add(strings.Repeat("a < b & c > d 👍🏽\n", 700), 2)
	f.Add("*a **b** c* `code` [l](https://x.y) ~~s~~ _i_", 50)
	f.Fuzz(func(t *testing.T, s string, repeat int) {
		if !utf8.ValidString(s) || repeat < 1 || repeat > 200 || len(s) > 2000 {
			t.Skip()
		}
		text := strings.Repeat(s, repeat)
		var seen []string
		for i, c := range renderChunks(text) {
			plain := c.text
			if c.html {
				var err error
				if plain, err = telegramtest.ParseHTML(c.text); err != nil {
					t.Fatalf("chunk %d %q: Telegram would refuse it: %v", i, c.text, err)
				}
			}
			if n := channels.UTF16(plain); n > MaxMessage {
				t.Fatalf("chunk %d shows %d UTF-16 units, over %d", i, n, MaxMessage)
			}
			seen = append(seen, plain)
		}
		if strings.ContainsAny(text, "*_~`[]\\#>-+") {
			return
		}
		if got, want := strings.Join(strings.Fields(strings.Join(seen, "")), " "), strings.Join(strings.Fields(text), " "); got != want {
			t.Errorf("plain text changed:\n got %q\nwant %q", got, want)
		}
	})
}
