package markdown

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestRender(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello", "<p>hello</p>\n"},
		{"**bold** and *it* and _it_ and ~~gone~~", "<p><strong>bold</strong> and <em>it</em> and <em>it</em> and <del>gone</del></p>\n"},
		{"snake_case_name", "<p>snake_case_name</p>\n"},
		{"# Title", "<h3>Title</h3>\n"},
		{"###### deep", "<h6>deep</h6>\n"},
		{"use `a<b>`", "<p>use <code>a&lt;b&gt;</code></p>\n"},
		{"```go\nfmt.Println(\"<hi>\")\n```", "<pre><code class=\"language-go\">fmt.Println(&#34;&lt;hi&gt;&#34;)</code></pre>\n"},
		{"~~~\nunclosed", "<pre><code>unclosed</code></pre>\n"},
		{"- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"1. one\n2. two", "<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n"},
		{"- a\n  - b", "<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n"},
		{"> quoted\n> more", "<blockquote>\n<p>quoted<br>\nmore</p>\n</blockquote>\n"},
		{"---", "<hr>\n"},
		{"line one\nline two", "<p>line one<br>\nline two</p>\n"},
		{"[reef](https://example.com/a?b=1&c=2)", `<p><a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener noreferrer" target="_blank">reef</a></p>` + "\n"},
		{"<https://example.com>", `<p><a href="https://example.com" rel="nofollow noopener noreferrer" target="_blank">https://example.com</a></p>` + "\n"},
		{"| a | b |\n|---|:-:|\n| 1 | `x|y` |", "<table>\n<thead><tr><th>a</th><th>b</th></tr></thead>\n<tbody>\n<tr><td>1</td><td><code>x|y</code></td></tr>\n</tbody>\n</table>\n"},
		{`\*not em\*`, "<p>*not em*</p>\n"},
	}
	for _, tt := range tests {
		if got := Render(tt.in); got != tt.want {
			t.Errorf("Render(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// Payloads a model or a person (through any channel) could put into a text that a page
// then shows: none may become markup, a style, an event handler or a script URL.
var hostile = []string{
	`<script>alert(1)</script>`,
	`<img src=x onerror=alert(1)>`,
	`<style>body{display:none}</style>`,
	`<a href="javascript:alert(1)">x</a>`,
	`[click](javascript:alert(1))`,
	`[click](JaVaScRiPt:alert(1))`,
	`[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
	`[click](vbscript:msgbox(1))`,
	"[click](java\tscript:alert(1))",
	`[x](https://a.example/" onmouseover="alert(1))`,
	`[x](https://a.example/"onmouseover="alert(1)")`,
	`<https://a.example/"onclick="alert(1)>`,
	`<javascript:alert(1)>`,
	"```\"><script>alert(1)</script>\n<b>x</b>\n```",
	"```js\" onload=\"alert(1)\nx\n```",
	`**<svg onload=alert(1)>**`,
	"`<iframe src=//evil>`",
	"| <script>x</script> | b |\n|---|---|\n| <img src=x onerror=alert(1)> | c |",
	"> <div style=\"position:fixed\">over</div>",
	`&lt;script&gt; &#x3C;script&#x3E;`,
	"- <b onclick=alert(1)>item</b>",
	"<scr<script>ipt>alert(1)</script>",
	`<form action=https://evil><input name=token></form>`,
	`<meta http-equiv="refresh" content="0;url=https://evil">`,
}

func TestHostileInputStaysText(t *testing.T) {
	for _, in := range hostile {
		out := Render(in)
		checkSafe(t, in, out)
		lower := strings.ToLower(out)
		for _, bad := range []string{"<script", "<img", "<style", "<svg", "<iframe", "<form", "<input", "<meta", "<div", "<b ", "javascript:\"", "href=\"javascript", "href=\"data", "href=\"vbscript", "onerror=\"", "onload=\""} {
			if strings.Contains(lower, bad) {
				t.Errorf("Render(%q) = %q: contains %q", in, out, bad)
			}
		}
	}
}

var allowed = map[string]map[string]bool{
	"p": {}, "h3": {}, "h4": {}, "h5": {}, "h6": {}, "ul": {}, "ol": {}, "li": {}, "blockquote": {},
	"pre": {}, "code": {"class": true}, "hr": {}, "table": {}, "thead": {}, "tbody": {}, "tr": {}, "th": {}, "td": {},
	"strong": {}, "em": {}, "del": {}, "a": {"href": true, "rel": true, "target": true}, "br": {},
}

// checkSafe parses out as a browser would and fails on any element or attribute outside the
// package's list, a link that is not http(s)/mailto, or a class that is not a language.
func checkSafe(t *testing.T, in, out string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken && tt != html.EndTagToken {
			if tt == html.CommentToken || tt == html.DoctypeToken {
				t.Errorf("Render(%q) = %q: a %v", in, out, tt)
			}
			continue
		}
		tok := z.Token()
		attrs, ok := allowed[tok.Data]
		if !ok {
			t.Errorf("Render(%q) = %q: element <%s>", in, out, tok.Data)
			continue
		}
		for _, a := range tok.Attr {
			switch {
			case !attrs[a.Key]:
				t.Errorf("Render(%q) = %q: attribute %s on <%s>", in, out, a.Key, tok.Data)
			case a.Key == "href" && !Linkable(a.Val):
				t.Errorf("Render(%q) = %q: link to %q", in, out, a.Val)
			case a.Key == "class" && (!strings.HasPrefix(a.Val, "language-") || strings.ContainsAny(a.Val, " \"'<>")):
				t.Errorf("Render(%q) = %q: class %q", in, out, a.Val)
			}
		}
	}
}

func TestHugeInputIsOneBlock(t *testing.T) {
	in := strings.Repeat("*a `b [c](", MaxInput/8)
	if out := Render(in); !strings.HasPrefix(out, "<pre>") {
		t.Errorf("an input over MaxInput was formatted")
	}
	in = strings.Repeat("*a `b [c](", (MaxInput-1)/12) // under the limit: still linear enough to finish
	checkSafe(t, "many openers", Render(in))
}

func FuzzRender(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Add("# h\n\n- a\n  - b\n\n```go\nx\n```\n> q\n\n| a |\n|---|\n| b |")
	f.Fuzz(func(t *testing.T, in string) {
		checkSafe(t, in, Render(in))
	})
}
