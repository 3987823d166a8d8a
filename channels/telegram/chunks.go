package telegram

import (
	"strings"
	"unicode"

	"github.com/reefgw/reef/channels"
)

// MaxMessage is Telegram's message length limit in UTF-16 code units.
const MaxMessage = 4096

// splitMargin is the room left when splitting the Markdown source for what rendering adds
// (tags, entities); a chunk that still grows past MaxMessage is split again, smaller.
const splitMargin = 256

// chunk is one message to send: rendered HTML, or plain text when rendering cannot fit.
type chunk struct {
	text   string // what to send
	html   bool   // text is HTML (parse_mode HTML)
	source string // the Markdown it was rendered from: the plain-text fallback
}

// Chunks renders a reply into the HTML messages Send would send, each at most MaxMessage
// UTF-16 units. The Markdown is split first (never inside a surrogate pair or grapheme,
// code fences closed and reopened across chunks), then each part is rendered.
func Chunks(text string) []string {
	var out []string
	for _, c := range renderChunks(text) {
		out = append(out, c.text)
	}
	return out
}

func renderChunks(text string) []chunk {
	return renderWithin(text, MaxMessage-splitMargin-channels.FenceReserve)
}

func renderWithin(src string, limit int) []chunk {
	var out []chunk
	for _, part := range channels.BalanceFences(channels.Split(src, limit, channels.UTF16)) {
		if blank(part) {
			continue
		}
		html := RenderHTML(part)
		n := channels.UTF16(html)
		switch {
		case n <= MaxMessage:
			out = append(out, chunk{text: html, html: true, source: part})
		case limit > 64 && channels.UTF16(part) > 1:
			next := max(limit*MaxMessage/n*9/10, 64) // n > MaxMessage, so next < limit
			out = append(out, renderWithin(part, next)...)
		default: // rendering cannot fit (e.g. a fence line of thousands of characters)
			out = append(out, plainChunks(part)...)
		}
	}
	return out
}

// plainChunks splits text into plain-text messages of at most MaxMessage units.
func plainChunks(text string) []chunk {
	var out []chunk
	for _, p := range channels.Split(text, MaxMessage, channels.UTF16) {
		if strings.TrimSpace(p) != "" {
			out = append(out, chunk{text: p, source: p})
		}
	}
	return out
}

// blank reports whether a Markdown part would show nothing (only spaces and syntax, like an
// empty code block): Telegram refuses an empty message for good.
func blank(part string) bool {
	return strings.TrimFunc(part, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("*_~`>#-+", r)
	}) == ""
}
