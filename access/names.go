package access

import (
	"strings"
	"unicode"
)

// maxNameRunes bounds a display name as reef shows it.
const maxNameRunes = 64

// DisplayName makes a name someone chose (a sender's display name) safe to show inside
// reef's own messages, such as the owner's approval requests: control characters and line
// breaks become spaces, format characters (bidi overrides such as U+202E, zero-width
// characters, soft hyphens) are dropped, backticks become apostrophes so the name cannot
// open or close a code span, runs of spaces collapse, and it is cut to 64 characters.
func DisplayName(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsControl(r), unicode.In(r, unicode.Zl, unicode.Zp), unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case r == '`':
			r = '\''
		}
		if n >= maxNameRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
