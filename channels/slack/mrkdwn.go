package slack

import (
	"regexp"
	"strings"
)

// Mrkdwn turns the Markdown a model writes into Slack's mrkdwn: **bold** and __bold__ as
// *bold*, *italic* and _italic_ as _italic_, ~~strike~~ as ~strike~, `code` and fenced code
// blocks kept (without the language, which Slack does not show), [text](url) as <url|text>,
// headings as bold lines, "- " and "* " bullets as •. &, < and > are escaped everywhere (also
// in code), as Slack requires, so that no text becomes a mention or a link by accident.
func Mrkdwn(md string) string {
	var out strings.Builder
	lines := strings.Split(md, "\n")
	inFence := false
	for i, line := range lines {
		if i > 0 {
			out.WriteByte('\n')
		}
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") {
			out.WriteString("```")
			if inFence && strings.TrimSpace(strings.TrimLeft(trimmed, "`")) != "" {
				out.WriteString(escape(strings.TrimLeft(trimmed, "`")))
			}
			inFence = !inFence
			continue
		}
		if inFence {
			out.WriteString(escape(line))
			continue
		}
		out.WriteString(renderLine(line))
	}
	return out.String()
}

var (
	heading  = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	bullet   = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	quote    = regexp.MustCompile(`^\s*>\s?(.*)$`)
	rule     = regexp.MustCompile(`^\s*([-*_])(\s*[-*_]){2,}\s*$`)
	linkRe   = regexp.MustCompile(`\[([^\]\n]+)\]\(([^)\s]+)\)`)
	boldRe   = regexp.MustCompile(`\*\*([^*\n]+?)\*\*|__([^_\n]+?)__`)
	italicRe = regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*\n]*?)\*([^*\w]|$)`)
	strikeRe = regexp.MustCompile(`~~([^~\n]+?)~~`)
)

// renderLine renders one line outside code blocks.
func renderLine(line string) string {
	switch {
	case rule.MatchString(line):
		return "───"
	case heading.MatchString(line):
		return "*" + inline(heading.FindStringSubmatch(line)[1]) + "*"
	case quote.MatchString(line):
		return "&gt; " + inline(quote.FindStringSubmatch(line)[1])
	case bullet.MatchString(line):
		m := bullet.FindStringSubmatch(line)
		return m[1] + "• " + inline(m[2])
	}
	return inline(line)
}

// inline renders a line's spans: code spans are kept as they are (escaped), the text between
// them gets links and emphasis.
func inline(s string) string {
	var out strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			break
		}
		out.WriteString(emphasis(s[:i]))
		out.WriteString("`" + escape(s[i+1:i+1+j]) + "`")
		s = s[i+j+2:]
	}
	out.WriteString(emphasis(s))
	return out.String()
}

// emphasis renders links, bold, italics and strikes of text without code spans.
func emphasis(s string) string {
	// Links first, kept out of the escaping and emphasis by placeholders.
	var links []string
	s = linkRe.ReplaceAllStringFunc(s, func(m string) string {
		p := linkRe.FindStringSubmatch(m)
		url := p[2]
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "mailto:") {
			return m
		}
		label := strings.NewReplacer("|", "¦", ">", "›", "<", "‹").Replace(p[1])
		links = append(links, "<"+escapeURL(url)+"|"+escape(label)+">")
		return "\x00" + string(rune('0'+len(links)-1)) + "\x00"
	})
	s = escape(s)
	s = italicRe.ReplaceAllString(s, "${1}\x01${2}\x01${3}")
	s = boldRe.ReplaceAllStringFunc(s, func(m string) string {
		p := boldRe.FindStringSubmatch(m)
		return "*" + p[1] + p[2] + "*"
	})
	s = strings.ReplaceAll(s, "\x01", "_")
	s = strikeRe.ReplaceAllString(s, "~${1}~")
	for i, l := range links {
		s = strings.Replace(s, "\x00"+string(rune('0'+i))+"\x00", l, 1)
	}
	return s
}

// escape escapes Slack's three control characters.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// escapeURL keeps a URL from closing the <url|text> it is put in.
func escapeURL(u string) string {
	return strings.NewReplacer("&", "&amp;", "|", "%7C", ">", "%3E", "<", "%3C", " ", "%20").Replace(u)
}
