package web

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// extractHTML turns a page into its title and readable text: the main content (the page's
// <main>, else its largest <article>, else <body>) without navigation, headers, footers,
// sidebars, forms, scripts and styles, as Markdown, or as plain text when plain is set.
// Relative links are resolved against base.
func extractHTML(doc *html.Node, base *url.URL, plain bool) (title, text string) {
	title = pageTitle(doc)
	root := mainContent(doc)
	if root == nil {
		return title, ""
	}
	w := &mdWriter{}
	c := converter{base: base, plain: plain}
	c.children(w, root)
	return title, w.String()
}

// tokenText is the title and the text of a page the parser refused (html.Parse stops at 512
// open elements), without scripts and styles, its white space collapsed.
func tokenText(page []byte) (title, text string) {
	z := html.NewTokenizer(bytes.NewReader(page))
	var b strings.Builder
	var skip, inTitle bool
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapse(title), collapse(b.String())
		case html.StartTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			start := tt == html.StartTagToken
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				skip = start
			case atom.Title:
				inTitle = start
			}
			b.WriteByte(' ')
		case html.TextToken:
			switch {
			case inTitle:
				title += string(z.Text())
			case !skip:
				b.Write(z.Text())
			}
		}
	}
}

// pageTitle is the <title>, else og:title, else the first <h1>.
func pageTitle(doc *html.Node) string {
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title }); n != nil {
		if t := collapse(textOf(n)); t != "" {
			return t
		}
	}
	if n := find(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Meta && (attr(n, "property") == "og:title" || attr(n, "name") == "twitter:title")
	}); n != nil {
		if t := collapse(attr(n, "content")); t != "" {
			return t
		}
	}
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.H1 }); n != nil {
		return collapse(textOf(n))
	}
	return ""
}

func mainContent(doc *html.Node) *html.Node {
	if n := find(doc, func(n *html.Node) bool {
		return n.Type == html.ElementNode && !skipped(n) && (n.DataAtom == atom.Main || attr(n, "role") == "main")
	}); n != nil {
		return n
	}
	var best *html.Node
	bestLen := 0
	walk(doc, func(n *html.Node) bool {
		if n.DataAtom == atom.Article && !skipped(n) {
			if l := len(collapse(textOf(n))); l > bestLen {
				best, bestLen = n, l
			}
			return false
		}
		return true
	})
	if best != nil {
		return best
	}
	if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body }); n != nil {
		return n
	}
	return doc
}

// skippedTags never hold a page's main text.
var skippedTags = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Math: true, atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Form: true, atom.Iframe: true, atom.Button: true, atom.Select: true, atom.Input: true,
	atom.Textarea: true, atom.Dialog: true, atom.Menu: true, atom.Canvas: true, atom.Object: true,
	atom.Embed: true, atom.Head: true, atom.Video: true, atom.Audio: true, atom.Picture: false,
}

// skippedRoles are ARIA landmarks of page furniture.
var skippedRoles = map[string]bool{"navigation": true, "banner": true, "contentinfo": true,
	"complementary": true, "search": true, "menu": true, "menubar": true, "dialog": true, "alert": false}

// boilerplateWords in a class or id mark page furniture (whole words: "nav", not "canvas").
var boilerplateWords = map[string]bool{"nav": true, "navbar": true, "navigation": true, "menu": true,
	"sidebar": true, "footer": true, "header": true, "breadcrumb": true, "breadcrumbs": true, "cookie": true,
	"cookies": true, "banner": true, "advert": true, "ads": true, "social": true, "share": true, "skip": true,
	"masthead": true, "topbar": true, "toc": false, "popup": true, "modal": true, "newsletter": true}

// skipped reports whether n is furniture, hidden or not text at all.
func skipped(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return n.Type == html.CommentNode
	}
	if skippedTags[n.DataAtom] || skippedRoles[attr(n, "role")] {
		return true
	}
	if hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" {
		return true
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	if strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden") {
		return true
	}
	for _, v := range []string{attr(n, "class"), attr(n, "id")} {
		for _, w := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool {
			return r == ' ' || r == '-' || r == '_' || r == '\t'
		}) {
			if boilerplateWords[w] {
				return true
			}
		}
	}
	return false
}

type converter struct {
	base  *url.URL
	plain bool
	depth int // elements open around the node being converted
}

// maxDepth bounds the nesting converted with markup: deeper content comes as plain text, so a
// page of deeply nested inline elements costs linear time, not quadratic.
const maxDepth = 48

func (c converter) children(w *mdWriter, n *html.Node) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.node(w, ch)
	}
}

func (c converter) node(w *mdWriter, n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode, html.DocumentNode:
	default:
		return
	}
	if skipped(n) {
		return
	}
	c.depth++
	if c.depth > maxDepth {
		w.text(visibleText(n))
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.block()
		if !c.plain {
			w.marker(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
		}
		w.text(c.inline(n))
		w.block()
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Figure, atom.Figcaption,
		atom.Dl, atom.Address, atom.Details, atom.Summary, atom.Center:
		w.block()
		c.children(w, n)
		w.block()
	case atom.Dt, atom.Dd, atom.Tr:
		w.line()
		c.children(w, n)
		w.line()
	case atom.Br:
		w.line()
	case atom.Hr:
		w.block()
		w.marker("---")
		w.block()
	case atom.Pre:
		c.pre(w, n)
	case atom.Ul, atom.Ol:
		c.list(w, n)
	case atom.Blockquote:
		w.block()
		w.push("> ")
		c.children(w, n)
		w.pop()
		w.block()
	case atom.Table:
		c.table(w, n)
	case atom.A:
		c.link(w, n)
	case atom.Img:
		if alt := collapse(attr(n, "alt")); alt != "" {
			if c.plain {
				w.text(alt)
			} else {
				w.marker("![" + alt + "](" + c.resolve(attr(n, "src")) + ")")
			}
		}
	case atom.Strong, atom.B:
		c.wrap(w, n, "**")
	case atom.Em, atom.I:
		c.wrap(w, n, "_")
	case atom.Code, atom.Kbd, atom.Samp:
		c.wrap(w, n, "`")
	default:
		c.children(w, n)
	}
}

// inline renders n's content on one line.
func (c converter) inline(n *html.Node) string {
	sub := &mdWriter{}
	c.children(sub, n)
	return strings.Join(strings.Fields(sub.String()), " ")
}

func (c converter) wrap(w *mdWriter, n *html.Node, mark string) {
	s := c.inline(n)
	if s == "" {
		return
	}
	if c.plain {
		w.text(s)
		return
	}
	w.marker(mark + s + mark)
}

func (c converter) link(w *mdWriter, n *html.Node) {
	s := c.inline(n)
	href := strings.TrimSpace(attr(n, "href"))
	lower := strings.ToLower(href)
	if s == "" || c.plain || href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(lower, "javascript:") {
		w.text(s)
		return
	}
	w.marker("[" + s + "](" + c.resolve(href) + ")")
}

func (c converter) resolve(ref string) string {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil || c.base == nil {
		return ref
	}
	return c.base.ResolveReference(u).String()
}

func (c converter) pre(w *mdWriter, n *html.Node) {
	code := strings.Trim(textOf(n), "\n")
	w.block()
	if !c.plain {
		w.marker("```")
		w.line()
	}
	w.raw(code)
	if !c.plain {
		w.line()
		w.marker("```")
	}
	w.block()
}

func (c converter) list(w *mdWriter, n *html.Node) {
	w.block()
	i := 0
	for li := n.FirstChild; li != nil; li = li.NextSibling {
		if li.DataAtom != atom.Li || skipped(li) {
			continue
		}
		i++
		bullet := "- "
		if n.DataAtom == atom.Ol {
			bullet = itoa(i) + ". "
		}
		w.line()
		w.marker(bullet)
		w.push(strings.Repeat(" ", len(bullet)))
		c.children(w, li)
		w.pop()
	}
	w.block()
}

func (c converter) table(w *mdWriter, n *html.Node) {
	var rows [][]string
	walk(n, func(x *html.Node) bool {
		if x != n && x.DataAtom == atom.Table {
			return false // nested tables are flattened into their cell
		}
		if x.DataAtom == atom.Tr {
			var cells []string
			for td := x.FirstChild; td != nil; td = td.NextSibling {
				if td.DataAtom == atom.Td || td.DataAtom == atom.Th {
					cells = append(cells, strings.ReplaceAll(c.inline(td), "|", "\\|"))
				}
			}
			if len(cells) > 0 {
				rows = append(rows, cells)
			}
			return false
		}
		return true
	})
	w.block()
	for i, r := range rows {
		w.line()
		if c.plain {
			w.text(strings.Join(r, "\t"))
			continue
		}
		w.marker("| " + strings.Join(r, " | ") + " |")
		if i == 0 {
			w.line()
			w.marker(strings.TrimSuffix(strings.Repeat("| --- ", len(r)), " ") + " |")
		}
	}
	w.block()
}

// walk visits n and its descendants in document order; f returns false to skip children.
func walk(n *html.Node, f func(*html.Node) bool) {
	if !f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

// find returns the first node in document order for which f is true.
func find(n *html.Node, f func(*html.Node) bool) *html.Node {
	var found *html.Node
	walk(n, func(x *html.Node) bool {
		if found != nil {
			return false
		}
		if f(x) {
			found = x
			return false
		}
		return true
	})
	return found
}

// visibleText is the text of n and its descendants but those skipped.
func visibleText(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
			b.WriteByte(' ')
		}
		return !skipped(x)
	})
	return b.String()
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		return x.DataAtom != atom.Script && x.DataAtom != atom.Style
	})
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
