package telegram

import (
	"strings"

	"github.com/reefgw/reef/internal/markdown"
)

// telegramHTML is the inline syntax of Telegram's HTML: <b>, <i>, <s>, <code>, links to
// http(s), tg and mailto URLs, and only <, > and & escaped. A bare URL is text: Telegram
// links it.
var telegramHTML = &markdown.Dialect{
	WriteText: writeEscaped,
	CodeOpen:  "<code>",
	CodeClose: "</code>",
	Emphasis:  emphasisTags,
	Linkable: func(url string) bool {
		return markdown.LinkableScheme(url, "https://", "http://", "tg://", "mailto:")
	},
	Link: func(out *strings.Builder, href, html string) {
		out.WriteString(`<a href="` + strings.ReplaceAll(escapeHTML(href), `"`, "&quot;") + `">` + html + "</a>")
	},
	Autolink: func(out *strings.Builder, url string) { out.WriteString(escapeHTML(url)) },
}

// renderInline renders the inline Markdown of one line: code spans, links, emphasis and
// backslash escapes.
func renderInline(s string) string { return telegramHTML.Inline(s) }

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
