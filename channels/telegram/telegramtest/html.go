package telegramtest

import (
	"fmt"
	"github.com/reefgw/reef/channels"
	"html"
	"strings"
)

// htmlTags are the tags Telegram's HTML parse mode accepts.
var htmlTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "tg-emoji": true, "code": true, "pre": true, "blockquote": true,
}

// ParseHTML checks text the way Telegram's HTML parse mode does (only supported tags, every
// tag closed in order, '<' never bare) and returns the text the user sees: tags removed and
// entities (&lt; &gt; &amp; &quot; and numeric ones) decoded. The error reads like the part
// of Telegram's description after "can't parse entities: ".
func ParseHTML(text string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(text); {
		switch text[i] {
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("Unclosed start tag at byte offset %d", i)
			}
			tag := text[i+1 : i+end]
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				name = strings.ToLower(strings.TrimSpace(name))
				if len(stack) == 0 {
					return "", fmt.Errorf("Unexpected end tag at byte offset %d", i)
				}
				if top := stack[len(stack)-1]; top != name {
					return "", fmt.Errorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top, name)
				}
				stack = stack[:len(stack)-1]
			} else {
				name := strings.ToLower(tag)
				if j := strings.IndexAny(name, " \t\n"); j >= 0 {
					name = name[:j]
				}
				if !htmlTags[name] {
					return "", fmt.Errorf("Unsupported start tag %q at byte offset %d", name, i)
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '&':
			n := entityLen(text[i:])
			out.WriteString(html.UnescapeString(text[i : i+n]))
			i += n
		default:
			out.WriteByte(text[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("Can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return out.String(), nil
}

// entityLen returns the length of the character reference at the start of s, or 1 when s
// starts with a bare '&' (which Telegram keeps as text).
func entityLen(s string) int {
	for _, name := range []string{"&lt;", "&gt;", "&amp;", "&quot;"} {
		if strings.HasPrefix(s, name) {
			return len(name)
		}
	}
	if strings.HasPrefix(s, "&#") {
		if end := strings.IndexByte(s, ';'); end > 2 && end < 12 {
			return end + 1
		}
	}
	return 1
}

// UTF16Len counts s in UTF-16 code units, as Telegram limits message length.
func UTF16Len(s string) int { return channels.UTF16(s) }
