package slack

import (
	"regexp"
	"strings"

	"github.com/reefgw/reef/internal/markdown"
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
	heading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	bullet  = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	quote   = regexp.MustCompile(`^\s*>\s?(.*)$`)
	rule    = regexp.MustCompile(`^\s*([-*_])(\s*[-*_]){2,}\s*$`)
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

// mrkdwn is Slack's inline syntax, parsed by the same renderer as the web's and Telegram's
// HTML: code spans kept (escaped), emphasis as *bold*, _italic_ and ~strike~, links as
// <url|text> to http(s) and mailto URLs.
var mrkdwn = &markdown.Dialect{
	WriteText: writeEscaped,
	CodeOpen:  "`",
	CodeClose: "`",
	Emphasis: func(c byte, n int) (open, end string) {
		switch {
		case c == '~':
			return "~", "~"
		case n == 1:
			return "_", "_"
		case n == 2:
			return "*", "*"
		default:
			return "*_", "_*"
		}
	},
	Linkable: markdown.Linkable,
	Link: func(out *strings.Builder, href, text string) {
		out.WriteString("<" + escapeURL(href) + "|" + strings.ReplaceAll(text, "|", "¦") + ">")
	},
	Autolink: func(out *strings.Builder, url string) { out.WriteString("<" + escapeURL(url) + ">") },
}

// inline renders a line's spans.
func inline(s string) string { return mrkdwn.Inline(s) }

// escape escapes Slack's three control characters.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func writeEscaped(out *strings.Builder, c byte) {
	switch c {
	case '&':
		out.WriteString("&amp;")
	case '<':
		out.WriteString("&lt;")
	case '>':
		out.WriteString("&gt;")
	default:
		out.WriteByte(c)
	}
}

// escapeURL keeps a URL from closing the <url|text> it is put in.
func escapeURL(u string) string {
	return strings.NewReplacer("&", "&amp;", "|", "%7C", ">", "%3E", "<", "%3C", " ", "%20").Replace(u)
}
