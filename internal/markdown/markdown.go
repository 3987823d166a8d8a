// Package markdown renders the Markdown a model writes as HTML that is safe to put into a
// page: the web UI shows answers with it (WebChat, a conversation in Sessions).
//
// It is strict by construction rather than a sanitizer run over someone else's HTML: the
// input is never passed through as markup. Every character of the input reaches the output
// as escaped text (<, >, &, " and ' as entities), inside a fixed set of elements this
// package writes itself:
//
//	p h3 h4 h5 h6 ul ol li blockquote pre code hr table thead tbody tr th td strong em del a br
//
// The only attributes are class="language-x" on a code block's <code> (letters, digits and
// -_+#. only) and, on links, href (http, https and mailto URLs only, entity-escaped) with
// rel="nofollow noopener noreferrer" and target="_blank". Raw HTML in the input (<script>,
// <img onerror=...>, <style>) is shown as text; javascript: and data: links stay text.
// Every element is closed in order whatever the input.
//
// What it understands: paragraphs, ATX headings (# to ######, shown from <h3> down),
// fenced code blocks (``` and ~~~, with a language), "- ", "* ", "+ " and "1. " lists (one
// level of nesting by indentation), "> " quotes, thematic breaks, pipe tables, and inline
// `code`, **strong**, *em* / _em_, ~~del~~, [text](url), <https://autolinks> and backslash
// escapes. Anything else is text.
//
// A Go module such as goldmark with bluemonday would render more of CommonMark, but would
// add two dependencies and a second step (render raw HTML, then clean it) whose safety
// depends on the cleaner's policy; answers need the subset above, and an escaper that never
// emits input markup has nothing to misconfigure.
package markdown

import (
	"regexp"
	"strings"
	"sync"
)

// MaxInput is the longest text Render formats; past it the text is shown escaped in one
// <pre> block (models' answers are far shorter; this bounds the work per page).
const MaxInput = 128 << 10

// Render returns md as safe HTML.
func Render(md string) string {
	if len(md) > MaxInput {
		return "<pre>" + Escape(md) + "</pre>"
	}
	md = strings.ReplaceAll(strings.ReplaceAll(md, "\r\n", "\n"), "\x00", "\uFFFD")
	var b strings.Builder
	renderBlocks(&b, strings.Split(md, "\n"), 0)
	return b.String()
}

// The block patterns are compiled on first use: a gateway whose web page never shows an
// answer pays nothing for them.
var (
	heading  = lazy(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	rule     = lazy(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	item     = lazy(`^( *)([-*+]|\d{1,9}[.)])[ \t]+(.*)$`)
	fence    = lazy("^ {0,3}(`{3,}|~{3,})[ \t]*([^`]*)$")
	tableSep = lazy(`^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$`)
)

func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// maxDepth bounds nested quotes and lists.
const maxDepth = 8

// renderBlocks writes the block structure of lines.
func renderBlocks(b *strings.Builder, lines []string, depth int) {
	for i := 0; i < len(lines); {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			i++
		case fence().MatchString(line):
			i = renderFence(b, lines, i)
		case heading().MatchString(line):
			m := heading().FindStringSubmatch(line)
			lvl := len(m[1]) + 2
			if lvl > 6 {
				lvl = 6
			}
			tag := "h" + string(rune('0'+lvl))
			b.WriteString("<" + tag + ">" + inline(m[2]) + "</" + tag + ">\n")
			i++
		case rule().MatchString(line):
			b.WriteString("<hr>\n")
			i++
		case strings.HasPrefix(strings.TrimLeft(line, " "), ">") && depth < maxDepth:
			i = renderQuote(b, lines, i, depth)
		case item().MatchString(line) && depth < maxDepth:
			i = renderList(b, lines, i, depth)
		case i+1 < len(lines) && strings.Contains(line, "|") && tableSep().MatchString(lines[i+1]) && strings.Contains(lines[i+1], "-"):
			i = renderTable(b, lines, i)
		default:
			i = renderParagraph(b, lines, i)
		}
	}
}

// startsBlock reports whether line begins a block other than a paragraph's continuation.
func startsBlock(line string) bool {
	return strings.TrimSpace(line) == "" || fence().MatchString(line) || heading().MatchString(line) ||
		rule().MatchString(line) || strings.HasPrefix(strings.TrimLeft(line, " "), ">") || item().MatchString(line)
}

func renderParagraph(b *strings.Builder, lines []string, i int) int {
	var parts []string
	for ; i < len(lines); i++ {
		if len(parts) > 0 && startsBlock(lines[i]) {
			break
		}
		parts = append(parts, inline(strings.TrimSpace(lines[i])))
	}
	b.WriteString("<p>" + strings.Join(parts, "<br>\n") + "</p>\n")
	return i
}

// renderFence writes the code block opening at lines[i]; an unclosed block runs to the end.
func renderFence(b *strings.Builder, lines []string, i int) int {
	m := fence().FindStringSubmatch(lines[i])
	marker := m[1]
	lang, _, _ := strings.Cut(strings.TrimSpace(m[2]), " ")
	lang = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '+' || r == '#' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return -1
	}, lang)
	if len(lang) > 32 {
		lang = lang[:32]
	}
	var body []string
	j := i + 1
	for ; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, marker[:3]) && strings.Trim(t, marker[:1]) == "" && len(t) >= len(marker) {
			j++
			break
		}
		body = append(body, lines[j])
	}
	if lang != "" {
		b.WriteString(`<pre><code class="language-` + lang + `">`)
	} else {
		b.WriteString("<pre><code>")
	}
	b.WriteString(Escape(strings.Join(body, "\n")))
	b.WriteString("</code></pre>\n")
	return j
}

// renderQuote writes the run of "> " lines at lines[i] as one blockquote.
func renderQuote(b *strings.Builder, lines []string, i, depth int) int {
	var inner []string
	for ; i < len(lines); i++ {
		rest, ok := strings.CutPrefix(strings.TrimLeft(lines[i], " "), ">")
		if !ok {
			break
		}
		inner = append(inner, strings.TrimPrefix(rest, " "))
	}
	b.WriteString("<blockquote>\n")
	renderBlocks(b, inner, depth+1)
	b.WriteString("</blockquote>\n")
	return i
}

// renderList writes the list starting at lines[i]: items at its indentation, deeper lines
// (and lines continuing an item) belong to the item before.
func renderList(b *strings.Builder, lines []string, i, depth int) int {
	m := item().FindStringSubmatch(lines[i])
	indent, ordered := len(m[1]), m[2][0] >= '0' && m[2][0] <= '9'
	tag := "ul"
	if ordered {
		tag = "ol"
	}
	b.WriteString("<" + tag + ">\n")
	for i < len(lines) {
		m := item().FindStringSubmatch(lines[i])
		if m == nil || len(m[1]) != indent || (m[2][0] >= '0' && m[2][0] <= '9') != ordered {
			break
		}
		body := []string{m[3]}
		i++
		for ; i < len(lines); i++ {
			l := lines[i]
			if strings.TrimSpace(l) == "" {
				if i+1 < len(lines) && leading(lines[i+1]) > indent {
					body = append(body, "")
					continue
				}
				break
			}
			if leading(l) <= indent && startsBlock(l) {
				break
			}
			body = append(body, strings.TrimPrefix(l, strings.Repeat(" ", min(leading(l), indent+2))))
		}
		b.WriteString("<li>")
		if len(body) == 1 || !anyBlock(body[1:]) {
			b.WriteString(inline(strings.Join(trimAll(body), " ")))
		} else {
			b.WriteString(inline(strings.TrimSpace(body[0])) + "\n")
			renderBlocks(b, body[1:], depth+1)
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</" + tag + ">\n")
	return i
}

func anyBlock(lines []string) bool {
	for _, l := range lines {
		if startsBlock(l) && strings.TrimSpace(l) != "" {
			return true
		}
	}
	return false
}

func trimAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func leading(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// renderTable writes a pipe table: a header row, the separator, body rows up to a line
// without "|".
func renderTable(b *strings.Builder, lines []string, i int) int {
	b.WriteString("<table>\n<thead><tr>")
	for _, c := range cells(lines[i]) {
		b.WriteString("<th>" + inline(c) + "</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	i += 2
	for ; i < len(lines) && strings.Contains(lines[i], "|") && strings.TrimSpace(lines[i]) != ""; i++ {
		b.WriteString("<tr>")
		for _, c := range cells(lines[i]) {
			b.WriteString("<td>" + inline(c) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	return i
}

// cells splits a table row on "|" outside code spans and after no backslash.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	code := false
	for i := 0; i < len(row); i++ {
		c := row[i]
		switch {
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
			continue
		case c == '`':
			code = !code
		case c == '|' && !code:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// Escape returns s with &, <, >, " and ' as entities.
func Escape(s string) string {
	if !strings.ContainsAny(s, `&<>"'`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		writeEscaped(&b, s[i])
	}
	return b.String()
}

func writeEscaped(b *strings.Builder, c byte) {
	switch c {
	case '&':
		b.WriteString("&amp;")
	case '<':
		b.WriteString("&lt;")
	case '>':
		b.WriteString("&gt;")
	case '"':
		b.WriteString("&#34;")
	case '\'':
		b.WriteString("&#39;")
	default:
		b.WriteByte(c)
	}
}
