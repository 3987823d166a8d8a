package web

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

const articlePage = `<!doctype html>
<html><head><title>  Reef  Tide
 Tables </title><style>body{color:red}</style><script>var secret = "menu-script";</script></head>
<body>
<header><a href="/">Home</a> <a href="/login">Log in</a></header>
<nav class="site-nav"><ul><li><a href="/a">Menu item A</a></li><li><a href="/b">Menu item B</a></li></ul></nav>
<div class="cookie-banner">We use cookies</div>
<main>
  <h1>Tide   tables</h1>
  <p>The tide rises <b>twice</b> a day; see the <a href="/docs/tides?x=1&amp;y=2">full
     table</a> or <a href="javascript:alert(1)">this</a>.</p>
  <ul><li>High: 06:12</li><li>Low: 12:30
    <ol><li>neap</li><li>spring</li></ol></li></ul>
  <blockquote><p>Time and tide wait for no man.</p></blockquote>
  <pre><code>if tide > 3 {
    swim()
}</code></pre>
  <table><tr><th>Day</th><th>High</th></tr><tr><td>Mon</td><td>06:12</td></tr></table>
  <div hidden>hidden text</div>
  <aside>Related: ads</aside>
</main>
<footer>Copyright reef</footer>
</body></html>`

func TestExtractMarkdown(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(articlePage))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://example.com/page/")
	title, text := extractHTML(doc, base, false)
	if title != "Reef Tide Tables" {
		t.Errorf("title %q, want %q", title, "Reef Tide Tables")
	}
	want := "# Tide tables\n\n" +
		"The tide rises **twice** a day; see the [full table](https://example.com/docs/tides?x=1&y=2) or this.\n\n" +
		"- High: 06:12\n- Low: 12:30\n\n  1. neap\n  2. spring\n\n" +
		"> Time and tide wait for no man.\n\n" +
		"```\nif tide > 3 {\n    swim()\n}\n```\n\n" +
		"| Day | High |\n| --- | --- |\n| Mon | 06:12 |"
	if text != want {
		t.Errorf("got:\n%s\n\nwant:\n%s", text, want)
	}
	for _, furniture := range []string{"Menu item", "Log in", "cookies", "Copyright", "hidden text", "Related", "menu-script", "color:red"} {
		if strings.Contains(text, furniture) {
			t.Errorf("text holds %q", furniture)
		}
	}
}

func TestExtractPlainText(t *testing.T) {
	doc, _ := html.Parse(strings.NewReader(articlePage))
	_, text := extractHTML(doc, nil, true)
	for _, markup := range []string{"**", "](", "# ", "```", "| ---"} {
		if strings.Contains(text, markup) {
			t.Errorf("plain text holds Markdown %q:\n%s", markup, text)
		}
	}
	if !strings.Contains(text, "The tide rises twice a day; see the full table or this.") {
		t.Errorf("plain text lost the paragraph:\n%s", text)
	}
}

func TestExtractFallsBackToLargestArticleThenBody(t *testing.T) {
	doc, _ := html.Parse(strings.NewReader(`<body><div class="menu">Nav</div><article>short</article>
		<article><p>The long one wins because it has more words.</p></article></body>`))
	if _, text := extractHTML(doc, nil, false); text != "The long one wins because it has more words." {
		t.Errorf("got %q", text)
	}
	doc, _ = html.Parse(strings.NewReader(`<body><nav>Nav</nav><p>Just a body.</p></body>`))
	if title, text := extractHTML(doc, nil, false); text != "Just a body." || title != "" {
		t.Errorf("got %q, %q", title, text)
	}
}

// FuzzExtract: any page converts without a panic, and its text is valid UTF-8 once the result
// is encoded (what the model gets).
func FuzzExtract(f *testing.F) {
	f.Add(articlePage)
	f.Add("<ul><li><ol><li><blockquote><pre>x\n\n y</pre></blockquote></li></ol></li></ul>")
	f.Add("<table><tr><td><table><tr><td>a|b</td></tr></table></td></tr></table><a href=':'>x</a>")
	f.Add("<p>\xff\xfe<b> </b><i></i><img alt='\x00'></p><script>SCRIPT</script>")
	f.Fuzz(func(t *testing.T, page string) {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		base, _ := url.Parse("https://example.com/")
		for _, plain := range []bool{false, true} {
			title, text := extractHTML(doc, base, plain)
			if !strings.Contains(page, "SCRIPT") && strings.Contains(text+title, "SCRIPT") {
				t.Fatalf("text invented content: %q", text)
			}
			if strings.Contains(text, "\n\n\n") && !strings.Contains(page, "pre") && !strings.Contains(page, "PRE") {
				t.Errorf("more than one blank line outside preformatted text: %q", text)
			}
		}
	})
}

func TestExtractDeepNestingIsLinear(t *testing.T) {
	const levels = 480 // the parser refuses more than 512 open elements (fetch falls back to tokenText)
	page := "<p>" + strings.Repeat("<b><i><code><em>", levels/4) + "deep" + strings.Repeat("</em></code></i></b>", levels/4) + "</p>"
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() { _, text := extractHTML(doc, nil, false); done <- text }()
	select {
	case text := <-done:
		if !strings.Contains(text, "deep") {
			t.Errorf("the text lost the word: %.200q", text)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("converting a deeply nested page took over 20 s")
	}
}

func TestTokenTextWhenTheParserGivesUp(t *testing.T) {
	page := "<title>Deep</title><style>p{}</style>" + strings.Repeat("<div>", 600) + "bottom &amp; more<script>x()</script>"
	title, text := tokenText([]byte(page))
	if title != "Deep" || text != "bottom & more" {
		t.Errorf("got %q, %q", title, text)
	}
}
