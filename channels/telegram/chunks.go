package telegram

import (
	"html"
	"strings"

	"github.com/reefgw/reef/channels"
)

// MaxMessage is Telegram's message length limit: UTF-16 code units of the text after entity
// parsing (tags do not count, "&lt;" counts as one).
const MaxMessage = 4096

// chunk is one message to send: rendered HTML, or plain text when rendering cannot fit.
type chunk struct {
	text   string // what to send
	html   bool   // text is HTML (parse_mode HTML)
	source string // the text the user would see: the plain-text fallback
}

// Chunks renders a reply into the HTML messages Send would send, each showing at most
// MaxMessage UTF-16 units.
func Chunks(text string) []string {
	var out []string
	for _, c := range renderChunks(text) {
		out = append(out, c.text)
	}
	return out
}

// renderChunks renders the whole reply first and then splits the HTML by what the user sees,
// so a cut never changes how a part renders (a part beginning with '>' is no quote) and the
// limit is applied as Telegram applies it, after entity parsing. A cut falls between
// visible characters (never inside a tag, an entity, a surrogate pair or a grapheme),
// preferring blank lines, line ends and spaces; tags open at a cut are closed at the end of
// one part and reopened at the start of the next.
func renderChunks(text string) []chunk {
	rendered := RenderHTML(text)
	toks := tokenize(rendered)
	var vis strings.Builder
	for _, t := range toks {
		vis.WriteString(t.text)
	}
	var out []chunk
	var open []token // tags open at the start of the current part
	i := 0
	for _, part := range channels.Split(vis.String(), MaxMessage, channels.UTF16) {
		var body strings.Builder
		for _, t := range open {
			body.WriteString(t.raw)
		}
		stack := append([]token(nil), open...)
		// take the part's visible characters and the tags among them; closing tags right
		// after the last character stay in this part, opening tags go to the next.
		for n := 0; i < len(toks) && (n < len(part) || toks[i].closing); i++ {
			t := toks[i]
			if t.tag() && n >= len(part) && !t.closing {
				break
			}
			body.WriteString(t.raw)
			n += len(t.text)
			switch {
			case t.closing && len(stack) > 0:
				stack = stack[:len(stack)-1]
			case t.tag() && !t.closing:
				stack = append(stack, t)
			}
		}
		for j := len(stack) - 1; j >= 0; j-- {
			body.WriteString("</" + stack[j].name + ">")
		}
		open = stack
		if strings.TrimSpace(part) != "" {
			out = append(out, chunk{text: body.String(), html: true, source: part})
		}
	}
	return out
}

// token is a piece of rendered HTML: a tag, or one visible character (a rune or an entity).
type token struct {
	raw     string // as written in the HTML
	text    string // what the user sees; "" for a tag
	name    string // the tag's name
	closing bool   // a closing tag
}

func (t token) tag() bool { return t.name != "" }

// tokenize cuts HTML as RenderHTML writes it into tags and visible characters.
func tokenize(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 { // RenderHTML escapes every '<' it does not open a tag with
				end = len(s) - i - 1
			}
			raw := s[i : i+end+1]
			name, closing := strings.CutPrefix(strings.Trim(raw, "<>"), "/")
			name, _, _ = strings.Cut(name, " ")
			toks = append(toks, token{raw: raw, name: name, closing: closing})
			i += end + 1
		case '&':
			n := 1
			if end := strings.IndexByte(s[i:], ';'); end > 0 && end < 10 {
				n = end + 1
			}
			toks = append(toks, token{raw: s[i : i+n], text: html.UnescapeString(s[i : i+n])})
			i += n
		default:
			n := 1
			for n < len(s)-i && s[i+n]&0xC0 == 0x80 {
				n++
			}
			toks = append(toks, token{raw: s[i : i+n], text: s[i : i+n]})
			i += n
		}
	}
	return toks
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
