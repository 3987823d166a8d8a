package telegram

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// renderInline renders the inline Markdown of one line: code spans, links (when links is
// true; link text cannot hold another link), emphasis and backslash escapes.
func renderInline(s string, links bool) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_~[]()#+-.!<>&|{}", s[i+1]) >= 0:
			writeEscaped(&out, s[i+1])
			i += 2
			continue
		case c == '`':
			if n := renderCode(&out, s[i:]); n > 0 {
				i += n
				continue
			}
		case c == '[' && links:
			if n := renderLink(&out, s[i:]); n > 0 {
				i += n
				continue
			}
		case c == '<':
			if n := renderAutolink(&out, s[i:]); n > 0 {
				i += n
				continue
			}
		case c == '*' || c == '_' || c == '~':
			if n := renderEmphasis(&out, s, i, links); n > 0 {
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
		out.WriteString("<code>" + escapeHTML(inner) + "</code>")
		return k + n
	}
	return 0
}

// renderLink renders [text](url) at the start of s and returns its length, or 0.
func renderLink(out *strings.Builder, s string) int {
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
	if end < 0 || !linkable(s[mid+2:end]) {
		return 0
	}
	href := strings.ReplaceAll(escapeHTML(s[mid+2:end]), `"`, "&quot;")
	out.WriteString(`<a href="` + href + `">` + renderInline(text, false) + "</a>")
	return end + 1
}

// renderAutolink renders <https://...> at the start of s as the bare URL (Telegram links it).
func renderAutolink(out *strings.Builder, s string) int {
	end := strings.IndexByte(s, '>')
	if end < 0 || !linkable(s[1:end]) || strings.ContainsAny(s[1:end], " <") {
		return 0
	}
	out.WriteString(escapeHTML(s[1:end]))
	return end + 1
}

func linkable(url string) bool {
	for _, p := range []string{"https://", "http://", "tg://", "mailto:"} {
		if len(url) > len(p) && strings.EqualFold(url[:len(p)], p) {
			return true
		}
	}
	return false
}

// renderEmphasis renders the emphasis opening at s[i] and returns its length, or 0 when the
// run does not open one or is not closed on this line.
func renderEmphasis(out *strings.Builder, s string, i int, links bool) int {
	c := s[i]
	n := runLength(s[i:], c)
	if n > 3 || c == '~' && n != 2 || i+n >= len(s) || isSpace(s[i+n:]) {
		return 0
	}
	if c == '_' && i > 0 && isWordBefore(s[:i]) { // snake_case is not emphasis
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
		closes := m == n && !isSpaceBefore(s[:k]) && k > i+n
		if c == '_' && k+n < len(s) && isWordAfter(s[k+n:]) {
			closes = false
		}
		if !closes {
			j = k + m
			continue
		}
		open, end := emphasisTags(c, n)
		out.WriteString(open + renderInline(s[i+n:k], links) + end)
		return k + n - i
	}
	return 0
}

func emphasisTags(c byte, n int) (open, end string) {
	switch {
	case c == '~':
		return "<s>", "</s>"
	case n == 1:
		return "<i>", "</i>"
	case n == 2:
		return "<b>", "</b>"
	default:
		return "<b><i>", "</i></b>"
	}
}

func runLength(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

func isSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func isSpaceBefore(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(r)
}

func isWordBefore(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isWordAfter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
