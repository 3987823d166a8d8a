package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// inline renders the inline Markdown of one block's text.
func inline(s string) string { return renderInline(s, true, 0) }

// maxNest bounds emphasis inside emphasis (and so the work on hostile input).
const maxNest = 6

// window bounds how far a span's opening looks for its end, so hostile input (thousands of
// unclosed "*" or "`") costs linear time.
const window = 2048

func ahead(s string, i int) string { return s[i:min(len(s), i+window)] }

// renderInline renders code spans, links (when links is true: link text holds no link),
// emphasis and backslash escapes; everything else is escaped text.
func renderInline(s string, links bool, nest int) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_~[]()#+-.!<>&|{}", s[i+1]) >= 0:
			writeEscaped(&out, s[i+1])
			i += 2
			continue
		case c == '`':
			if n := renderCode(&out, ahead(s, i)); n > 0 {
				i += n
				continue
			}
			n := runLength(s[i:], '`')
			out.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[' && links:
			if n := renderLink(&out, ahead(s, i), nest); n > 0 {
				i += n
				continue
			}
		case c == '<' && links:
			if n := renderAutolink(&out, ahead(s, i)); n > 0 {
				i += n
				continue
			}
		case (c == '*' || c == '_' || c == '~') && nest < maxNest:
			if n := renderEmphasis(&out, s[:min(len(s), i+window)], i, links, nest); n > 0 {
				i += n
				continue
			}
			n := runLength(s[i:], c) // an unmatched run stays text as a whole
			out.WriteString(s[i : i+n])
			i += n
			continue
		}
		writeEscaped(&out, c)
		i++
	}
	return out.String()
}

// renderCode renders the code span at the start of s and returns its length, or 0.
func renderCode(out *strings.Builder, s string) int {
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
		out.WriteString("<code>" + Escape(inner) + "</code>")
		return k + n
	}
	return 0
}

// renderLink renders [text](url) at the start of s and returns its length, or 0 (then the
// brackets are text).
func renderLink(out *strings.Builder, s string, nest int) int {
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
	if end < 0 || !Linkable(s[mid+2:end]) {
		return 0
	}
	writeLink(out, s[mid+2:end], renderInline(text, false, nest+1))
	return end + 1
}

// renderAutolink renders <https://...> at the start of s.
func renderAutolink(out *strings.Builder, s string) int {
	end := strings.IndexByte(s, '>')
	if end < 0 || !Linkable(s[1:end]) || strings.ContainsAny(s[1:end], " <\t") {
		return 0
	}
	writeLink(out, s[1:end], Escape(s[1:end]))
	return end + 1
}

func writeLink(out *strings.Builder, href, html string) {
	out.WriteString(`<a href="` + Escape(href) + `" rel="nofollow noopener noreferrer" target="_blank">` + html + "</a>")
}

// Linkable reports whether url may be a link's target: http, https or mailto, with no
// control character or space (a browser would strip them and could read another scheme).
func Linkable(url string) bool {
	for i := 0; i < len(url); i++ {
		if url[i] <= ' ' || url[i] == 0x7f {
			return false
		}
	}
	for _, p := range []string{"https://", "http://", "mailto:"} {
		if len(url) > len(p) && strings.EqualFold(url[:len(p)], p) {
			return true
		}
	}
	return false
}

// renderEmphasis renders the emphasis opening at s[i] and returns its length, or 0 when the
// run does not open one or is not closed in s.
func renderEmphasis(out *strings.Builder, s string, i int, links bool, nest int) int {
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
		open, end := emphasisTags(c, n)
		out.WriteString(open + renderInline(s[i+n:k], links, nest+1) + end)
		return k + n - i
	}
	return 0
}

func emphasisTags(c byte, n int) (open, end string) {
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
