package agent

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	markerOpen  = "<<<UNTRUSTED"
	markerClose = "<<<END_UNTRUSTED"
	// markerRemoved replaces anything in wrapped text that looks like a boundary marker.
	markerRemoved = "[marker removed]"
)

// WrapUntrusted wraps text from outside (web pages, tool output, quoted messages, sub-agent
// results, message metadata) between boundary markers carrying a fresh random id:
//
//	<<<UNTRUSTED id=3f9a0c1d5e7b2a48 source=web>>>
//	text
//	<<<END_UNTRUSTED id=3f9a0c1d5e7b2a48>>>
//
// Anything inside text that looks like a marker (any case, full-width or look-alike angle
// brackets, with or without the id) is replaced by "[marker removed]", so the text can neither
// close the block early nor open a forged one. The system prompt tells the model to treat such
// blocks as data.
func WrapUntrusted(source, text string) string {
	var raw [8]byte
	rand.Read(raw[:]) // never fails since Go 1.24
	id := hex.EncodeToString(raw[:])
	source = sourceName(source)
	text = strings.TrimRight(neutralizeMarkers(text), "\n")

	var b strings.Builder
	b.Grow(len(text) + 2*len(id) + len(source) + 64)
	b.WriteString(markerOpen + " id=")
	b.WriteString(id)
	b.WriteString(" source=")
	b.WriteString(source)
	b.WriteString(">>>\n")
	b.WriteString(text)
	b.WriteString("\n" + markerClose + " id=")
	b.WriteString(id)
	b.WriteString(">>>")
	return b.String()
}

// sourceName keeps a source label to [a-z0-9._:-], at most 40 bytes, "unknown" when empty.
func sourceName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '_'
	}, s)
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// neutralizeMarkers replaces marker-looking sequences in s: a run of two or more '<'-like
// characters followed by "UNTRUSTED" or "END_UNTRUSTED" (in any case, with "_", "-" or spaces
// between), and a bare "END_UNTRUSTED" anywhere. It also makes s valid UTF-8.
func neutralizeMarkers(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if !mayHoldMarker(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if end := matchMarker(s, i); end > i {
			b.WriteString(s[last:i])
			b.WriteString(markerRemoved)
			i, last = end, end
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// mayHoldMarker is a cheap pre-check: every marker contains the letters of "TRUSTED" in some
// form, so text without a 't'/'T' (ASCII or full-width) needs no scan.
func mayHoldMarker(s string) bool {
	return strings.ContainsAny(s, "tTｔＴ")
}

// matchMarker returns the end of a marker-like sequence starting at s[i], or i if none starts.
func matchMarker(s string, i int) int {
	j, brackets := i, 0
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if fold(r) != '<' {
			break
		}
		brackets++
		j += size
	}
	if brackets == 1 {
		return i // a lone '<' is not a marker; the bare-word check starts at the letter
	}
	k := skipSeparators(s, j)
	if brackets == 0 && k != j {
		return i
	}
	if end, ok := matchWord(s, k, "END"); ok {
		if end2, ok := matchWord(s, skipSeparators(s, end), "UNTRUSTED"); ok {
			return end2
		}
		return i
	}
	if brackets >= 2 {
		if end, ok := matchWord(s, k, "UNTRUSTED"); ok {
			return end
		}
	}
	return i
}

// skipSeparators skips spaces, '_' and '-' (and their full-width forms).
func skipSeparators(s string, j int) int {
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		switch fold(r) {
		case ' ', '\t', '_', '-':
			j += size
		default:
			return j
		}
	}
	return j
}

// matchWord matches an upper-case ASCII word at s[j:], ignoring case and full-width forms.
func matchWord(s string, j int, word string) (int, bool) {
	for k := 0; k < len(word); k++ {
		if j >= len(s) {
			return j, false
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if fold(r) != rune(word[k]) {
			return j, false
		}
		j += size
	}
	return j, true
}

// fold maps full-width ASCII to ASCII, lower case to upper case and angle-bracket look-alikes to
// '<' or '>'.
func fold(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		r -= 0xFEE0
	}
	switch r {
	case '\u2039', '\u00ab', '\u2329', '\u3008', '\u27e8', '\ufe64', '\u227a', '\u276e':
		return '<'
	case '\u203a', '\u00bb', '\u232a', '\u3009', '\u27e9', '\ufe65', '\u227b', '\u276f':
		return '>'
	}
	if r >= 'a' && r <= 'z' {
		return r - ('a' - 'A')
	}
	if r >= utf8.RuneSelf {
		if u := unicode.ToUpper(r); u < utf8.RuneSelf { // 'ſ' → 'S', 'ı' → 'I'
			return u
		}
	}
	return r
}
