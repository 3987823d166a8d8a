package telegram

import (
	"regexp"
	"strings"
)

// RenderHTML turns the Markdown a model writes into Telegram's HTML: **bold**, *italic* and
// _italic_, ~~strike~~, `code`, fenced code blocks (<pre><code class="language-x">), links
// to http(s), tg and mailto URLs, headings (bold), "> " quotes (<blockquote>) and "- "
// bullets (•). Everything else is text, with <, > and & escaped. Every tag it writes is
// closed in order, so Telegram accepts the result whatever the input.
func RenderHTML(md string) string {
	var out strings.Builder
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if i > 0 {
			out.WriteByte('\n')
		}
		line := lines[i]
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trimmed, "```"):
			i = renderFence(&out, lines, i)
		case strings.HasPrefix(trimmed, ">"):
			i = renderQuote(&out, lines, i)
		default:
			renderLine(&out, line)
		}
	}
	return out.String()
}

// renderFence writes the code block opening at lines[start] and returns the index of its
// closing fence line (or the last line when the block is not closed).
func renderFence(out *strings.Builder, lines []string, start int) int {
	info := strings.TrimSpace(strings.TrimLeft(strings.TrimLeft(lines[start], " "), "`"))
	lang, _, _ := strings.Cut(info, " ")
	lang = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '+' || r == '#' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return -1
	}, lang)
	if lang != "" {
		out.WriteString(`<pre><code class="language-` + lang + `">`)
	} else {
		out.WriteString("<pre>")
	}
	end := len(lines) - 1
	var body []string
	for j := start + 1; j < len(lines); j++ {
		if strings.HasPrefix(strings.TrimLeft(lines[j], " "), "```") {
			end = j
			break
		}
		body = append(body, lines[j])
	}
	out.WriteString(escapeHTML(strings.Join(body, "\n")))
	if lang != "" {
		out.WriteString("</code></pre>")
	} else {
		out.WriteString("</pre>")
	}
	return end
}

// renderQuote writes the "> " lines starting at lines[start] as one blockquote and returns
// the index of its last line.
func renderQuote(out *strings.Builder, lines []string, start int) int {
	out.WriteString("<blockquote>")
	end := start
	for j := start; j < len(lines); j++ {
		rest, ok := strings.CutPrefix(strings.TrimLeft(lines[j], " "), ">")
		if !ok {
			break
		}
		if j > start {
			out.WriteByte('\n')
		}
		renderLine(out, strings.TrimPrefix(rest, " "))
		end = j
	}
	out.WriteString("</blockquote>")
	return end
}

var (
	heading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	bullet  = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	rule    = regexp.MustCompile(`^ {0,3}(?:(?:- *){3,}|(?:\* *){3,}|(?:_ *){3,})$`)
)

// renderLine writes one line outside code blocks.
func renderLine(out *strings.Builder, line string) {
	if m := heading.FindStringSubmatch(line); m != nil && m[1] != "" {
		out.WriteString("<b>" + renderInline(m[1]) + "</b>")
		return
	}
	if rule.MatchString(line) {
		out.WriteString("──────────")
		return
	}
	if m := bullet.FindStringSubmatch(line); m != nil {
		out.WriteString(m[1] + "• " + renderInline(m[2]))
		return
	}
	out.WriteString(renderInline(line))
}

// escapeHTML escapes the three characters Telegram's HTML treats specially.
func escapeHTML(s string) string {
	if !strings.ContainsAny(s, "<>&") {
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
	case '<':
		b.WriteString("&lt;")
	case '>':
		b.WriteString("&gt;")
	case '&':
		b.WriteString("&amp;")
	default:
		b.WriteByte(c)
	}
}
