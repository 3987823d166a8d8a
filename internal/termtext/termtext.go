// Package termtext makes text that came from outside reef — sender names and ids, chat ids,
// transcript and model text, cron job names — safe to print on a terminal.
//
// A terminal obeys what it prints: an escape sequence can clear a line (ESC[2K), a carriage
// return can overwrite one, a newline can add a forged one, and the bidirectional overrides
// make text read in another order than it is stored. Text and Line remove all of these;
// Quote and ID show a name or an id so that it cannot pass for another or for reef's own
// words. Every place reef prints such text to a terminal goes through one of them.
package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text returns s with every terminal control removed: escape sequences (CSI, OSC, DCS and
// the other string and two-character sequences, whole), C0 controls but newline and tab,
// DEL, C1 controls, and the bidirectional marks, embeddings, overrides and isolates
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). Invalid UTF-8 becomes U+FFFD.
func Text(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == 0x1b:
			n += skipEscape(s[i+n:])
		case r == 0x9b: // CSI in its C1 form
			n += skipCSI(s[i+n:])
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // DCS, SOS, OSC, PM, APC
			n += skipString(s[i+n:])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case control(r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Line is Text on a single line: newlines, carriage returns and tabs become spaces.
func Line(s string) string {
	s = Text(strings.ReplaceAll(s, "\r", " "))
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	return s
}

// Quote shows a name in double quotes, with Go's escapes for quotes, backslashes and every
// character that is not plainly printable (controls, bidi overrides, odd spaces), so that
// where the name ends and what it holds are never in doubt. "" is shown as -.
func Quote(s string) string {
	if s == "" {
		return "-"
	}
	return strconv.Quote(s)
}

// ID shows an id as it is when it is made of letters, digits and _ . : @ / + = -, as
// platform ids and session keys are, and quoted (see Quote) otherwise.
func ID(s string) string {
	if s == "" {
		return "-"
	}
	for _, r := range s {
		if !idRune(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func idRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:@/+=-", r)
}

// plain reports whether s has nothing Text would change: the common case, checked fast.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			for _, r := range s[i:] {
				if r == utf8.RuneError || control(r) && r != '\n' && r != '\t' || r == 0x1b || r >= 0x80 && r <= 0x9f {
					return false
				}
			}
			return true
		}
	}
	return true
}

// control reports a rune Text drops on its own: C0 and C1 controls, DEL, bidi controls.
func control(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// skipEscape returns the length of the rest of an escape sequence whose ESC has been read.
func skipEscape(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '[':
		return 1 + skipCSI(s[1:])
	case ']', 'P', 'X', '^', '_':
		return 1 + skipString(s[1:])
	}
	// ESC, intermediates (0x20–0x2F), a final byte (0x30–0x7E).
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI returns the length of a control sequence's parameters, intermediates and final byte.
func skipCSI(s string) int {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString returns the length of a control string up to and including its terminator
// (BEL, ESC \ or the C1 ST), or all of s when it has none.
func skipString(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x07 || r == 0x9c:
			return i + n
		case r == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i // an ESC ends the string and starts a sequence of its own
		}
		i += n
	}
	return len(s)
}
