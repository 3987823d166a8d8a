package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Dialect is the inline syntax one target writes: how text is escaped and which tags and
// links stand for code, emphasis and URLs. HTML is the web's; a channel with its own HTML
// subset (Telegram) brings its own, and shares the parsing.
type Dialect struct {
	// WriteText writes one byte of text, escaped.
	WriteText func(out *strings.Builder, c byte)
	// CodeOpen and CodeClose wrap a code span.
	CodeOpen, CodeClose string
	// Emphasis gives the tags for a run of n (1 to 3) '*' or '_', or two '~'.
	Emphasis func(c byte, n int) (open, end string)
	// Linkable reports whether a URL may be a link's target.
	Linkable func(url string) bool
	// Link writes a link to href (unescaped) around html (rendered).
	Link func(out *strings.Builder, href, html string)
	// Autolink writes <url> (Linkable, unescaped).
	Autolink func(out *strings.Builder, url string)
}

// HTML is the web's dialect: the tags the web pages allow, links that open in a new tab.
var HTML = &Dialect{
	WriteText: writeEscaped,
	CodeOpen:  "<code>",
	CodeClose: "</code>",
	Emphasis:  htmlEmphasis,
	Linkable:  Linkable,
	Link:      writeLink,
	Autolink:  func(out *strings.Builder, url string) { writeLink(out, url, Escape(url)) },
}

// inline renders the inline Markdown of one block's text.
func inline(s string) string { return HTML.Inline(s) }

// Inline renders code spans, links, emphasis and backslash escapes of one line of Markdown;
// everything else is escaped text. Every tag it writes is closed in order, whatever the input.
func (d *Dialect) Inline(s string) string { return d.render(s, true, 0) }

// maxNest bounds emphasis inside emphasis (and so the work on hostile input).
const maxNest = 6

// window bounds how far a span's opening looks for its end, so hostile input (thousands of
// unclosed "*" or "`") costs linear time.
const window = 2048

func ahead(s string, i int) string { return s[i:min(len(s), i+window)] }

// render renders s; links is false inside a link's text, which holds no other link.
func (d *Dialect) render(s string, links bool, nest int) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_~[]()#+-.!<>&|{}", s[i+1]) >= 0:
			d.WriteText(&out, s[i+1])
			i += 2
			continue
		case c == '`':
			if n := d.code(&out, ahead(s, i)); n > 0 {
				i += n
				continue
			}
			n := runLength(s[i:], '`')
			out.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[' && links:
			if n := d.link(&out, ahead(s, i), nest); n > 0 {
				i += n
				continue
			}
		case c == '<' && links:
			if n := d.autolink(&out, ahead(s, i)); n > 0 {
				i += n
				continue
			}
		case (c == '*' || c == '_' || c == '~') && nest < maxNest:
			if n := d.emphasis(&out, s[:min(len(s), i+window)], i, links, nest); n > 0 {
				i += n
				continue
			}
			n := runLength(s[i:], c) // an unmatched run stays text as a whole
			out.WriteString(s[i : i+n])
			i += n
			continue
		}
		d.WriteText(&out, c)
		i++
	}
	return out.String()
}

// code renders the code span at the start of s and returns its length, or 0.
func (d *Dialect) code(out *strings.Builder, s string) int {
	n := runLength(s, '`')
	fence := s[:n]
	for j := n; j < len(s); {
		k := strings.Index(s[j:], fence)
		if k < 0 {
			return 0
		}
		k += j
		if m := runLength(s[k:], '`'); m != n { // a longer run does not close
			j = k + m
			continue
		}
		inner := s[n:k]
		if strings.TrimSpace(inner) == "" {
			return 0
		}
		if len(inner) > 2 && inner[0] == ' ' && inner[len(inner)-1] == ' ' {
			inner = inner[1 : len(inner)-1]
		}
		out.WriteString(d.CodeOpen)
		for i := 0; i < len(inner); i++ {
			d.WriteText(out, inner[i])
		}
		out.WriteString(d.CodeClose)
		return k + n
	}
	return 0
}

// link renders [text](url) at the start of s and returns its length, or 0 (then the
// brackets are text).
func (d *Dialect) link(out *strings.Builder, s string, nest int) int {
	mid := strings.Index(s, "](")
	if mid < 0 {
		return 0
	}
	text := s[1:mid]
	if text == "" || strings.ContainsAny(text, "[]") {
		return 0
	}
	depth, end := 0, -1
	for j := mid + 2; j < len(s) && end < 0; j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				end = j
			}
			depth--
		case ' ', '\t':
			return 0
		}
	}
	if end < 0 || !d.Linkable(s[mid+2:end]) {
		return 0
	}
	d.Link(out, s[mid+2:end], d.render(text, false, nest+1))
	return end + 1
}

// autolink renders <https://...> at the start of s.
func (d *Dialect) autolink(out *strings.Builder, s string) int {
	end := strings.IndexByte(s, '>')
	if end < 0 || !d.Linkable(s[1:end]) || strings.ContainsAny(s[1:end], " <\t") {
		return 0
	}
	d.Autolink(out, s[1:end])
	return end + 1
}

func writeLink(out *strings.Builder, href, html string) {
	out.WriteString(`<a href="` + Escape(href) + `" rel="nofollow noopener noreferrer" target="_blank">` + html + "</a>")
}

// Linkable reports whether url may be a link's target on the web: http, https or mailto.
func Linkable(url string) bool { return LinkableScheme(url, "https://", "http://", "mailto:") }

// LinkableScheme reports whether url starts with one of schemes (case-insensitive) and has
// no control character or space (a browser would strip them and could read another scheme).
func LinkableScheme(url string, schemes ...string) bool {
	for i := 0; i < len(url); i++ {
		if url[i] <= ' ' || url[i] == 0x7f {
			return false
		}
	}
	for _, p := range schemes {
		if len(url) > len(p) && strings.EqualFold(url[:len(p)], p) {
			return true
		}
	}
	return false
}

// emphasis renders the emphasis opening at s[i] and returns its length, or 0 when the run
// does not open one or is not closed in s.
func (d *Dialect) emphasis(out *strings.Builder, s string, i int, links bool, nest int) int {
	c := s[i]
	n := runLength(s[i:], c)
	if n > 3 || c == '~' && n != 2 || i+n >= len(s) || isSpace(s[i+n:]) {
		return 0
	}
	if c == '_' && i > 0 && isWord(lastRune(s[:i])) { // snake_case is not emphasis
		return 0
	}
	delim := s[i : i+n]
	for j := i + n; j < len(s); {
		k := strings.Index(s[j:], delim)
		if k < 0 {
			return 0
		}
		k += j
		m := runLength(s[k:], c)
		closes := m == n && !unicode.IsSpace(lastRune(s[:k])) && k > i+n
		if c == '_' && k+n < len(s) && isWord(firstRune(s[k+n:])) {
			closes = false
		}
		if !closes {
			j = k + m
			continue
		}
		open, end := d.Emphasis(c, n)
		out.WriteString(open + d.render(s[i+n:k], links, nest+1) + end)
		return k + n - i
	}
	return 0
}

func htmlEmphasis(c byte, n int) (open, end string) {
	switch {
	case c == '~':
		return "<del>", "</del>"
	case n == 1:
		return "<em>", "</em>"
	case n == 2:
		return "<strong>", "</strong>"
	default:
		return "<strong><em>", "</em></strong>"
	}
}

func runLength(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

func isSpace(s string) bool { return unicode.IsSpace(firstRune(s)) }

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
