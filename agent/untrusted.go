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
// form, so ASCII text without a 't'/'T' needs no scan (text with other characters may spell
// it with a look-alike).
func mayHoldMarker(s string) bool {
	if strings.ContainsAny(s, "tT") {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// matchMarker returns the end of a marker-like sequence starting at s[i], or i if none starts.
func matchMarker(s string, i int) int {
	j, brackets := i, 0
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if brackets > 0 && ignorable(r) {
			j += size
			continue
		}
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

// skipSeparators skips spaces, '_' and '-' (and their full-width forms) and ignorable
// characters.
func skipSeparators(s string, j int) int {
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		switch fold(r) {
		case ' ', '\t', '_', '-', '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2212', '\u2017':
			j += size
		default:
			if !ignorable(r) {
				return j
			}
			j += size
		}
	}
	return j
}

// ignorable reports characters a reader does not see between letters: format characters
// (zero-width spaces and joiners, soft hyphens, bidi controls, U+FEFF), combining marks and
// variation selectors. A marker spelled with them inside still reads as a marker.
func ignorable(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me) || unicode.Is(unicode.Variation_Selector, r) ||
		r == '\u115F' || r == '\u1160' || r == '\u3164' || r == '\uFFA0' // Hangul fillers
}

// matchWord matches an upper-case ASCII word at s[j:], ignoring case and full-width forms.
func matchWord(s string, j int, word string) (int, bool) {
	for k := 0; k < len(word); k++ {
		for k > 0 && j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !ignorable(r) {
				break
			}
			j += size
		}
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

// fold maps full-width ASCII to ASCII, lower case to upper case, angle-bracket look-alikes to
// '<' or '>', and letters that look like Latin ones (Cyrillic, Greek, small capitals,
// mathematical and circled letters) to those.
func fold(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		r -= 0xFEE0
	}
	if l, ok := confusable[r]; ok {
		return l
	}
	switch {
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical letters: bold, italic, script, ... A-Z a-z
		if n := (r - 0x1D400) % 52; n < 26 {
			return 'A' + n
		} else {
			return 'A' + n - 26
		}
	case r >= 0x24B6 && r <= 0x24CF: // Ⓐ-Ⓩ
		return 'A' + r - 0x24B6
	case r >= 0x24D0 && r <= 0x24E9: // ⓐ-ⓩ
		return 'A' + r - 0x24D0
	case r >= 0x1F130 && r <= 0x1F149: // squared
		return 'A' + r - 0x1F130
	case r >= 0x1F150 && r <= 0x1F169: // negative circled
		return 'A' + r - 0x1F150
	case r >= 0x1F170 && r <= 0x1F189: // negative squared
		return 'A' + r - 0x1F170
	case r >= 0x1F1E6 && r <= 0x1F1FF: // regional indicators
		return 'A' + r - 0x1F1E6
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

// confusable maps letters that look like the Latin letters of the markers (A-Z) to them.
var confusable = map[rune]rune{
	// Cyrillic
	'А': 'A', 'а': 'A', 'В': 'B', 'в': 'B', 'С': 'C', 'с': 'C', 'Е': 'E', 'е': 'E', 'Ё': 'E', 'ё': 'E',
	'Н': 'H', 'н': 'H', 'І': 'I', 'і': 'I', 'Ј': 'J', 'ј': 'J', 'К': 'K', 'к': 'K', 'М': 'M', 'м': 'M',
	'О': 'O', 'о': 'O', 'Р': 'P', 'р': 'P', 'Ѕ': 'S', 'ѕ': 'S', 'Т': 'T', 'т': 'T', 'Х': 'X', 'х': 'X',
	'У': 'Y', 'у': 'Y', 'Ԁ': 'D', 'ԁ': 'D', 'Ԛ': 'Q', 'ԛ': 'Q', 'Ԝ': 'W', 'ԝ': 'W', 'Џ': 'U', 'Ц': 'U',
	'И': 'N', 'и': 'N', 'П': 'N', 'п': 'N', 'Я': 'R', 'я': 'R', 'Ѐ': 'E', 'ѐ': 'E', 'Є': 'E', 'є': 'E',
	// Greek
	'Α': 'A', 'α': 'A', 'Β': 'B', 'β': 'B', 'Ε': 'E', 'ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'ι': 'I',
	'Κ': 'K', 'κ': 'K', 'Μ': 'M', 'Ν': 'N', 'ν': 'N', 'Ο': 'O', 'ο': 'O', 'Ρ': 'P', 'ρ': 'P', 'Τ': 'T',
	'τ': 'T', 'Υ': 'Y', 'υ': 'U', 'Χ': 'X', 'χ': 'X', 'Δ': 'D', 'δ': 'D', 'Σ': 'S', 'σ': 'S', 'ς': 'S',
	// Armenian, Cherokee and others that look like U, N, T, R, S, E, D
	'Ս': 'U', 'ս': 'U', 'Ո': 'N', 'ո': 'N', 'Ꭼ': 'E', 'Ꭰ': 'D', 'Ꭱ': 'R', 'Ꮪ': 'S', 'Ꭲ': 'T',
	'ᴜ': 'U', 'ɴ': 'N', 'ᴛ': 'T', 'ʀ': 'R', 'ꜱ': 'S', 'ᴇ': 'E', 'ᴅ': 'D', 'ᴀ': 'A', 'ᴏ': 'O',
	'Ⅾ': 'D', 'ⅾ': 'D', 'ⅅ': 'D', 'ⅆ': 'D', 'ℰ': 'E', 'ℯ': 'E', 'ℕ': 'N', 'ℛ': 'R', 'ℜ': 'R', 'ℝ': 'R',
	'ℓ': 'L', 'ℤ': 'Z', 'ℙ': 'P', 'ℚ': 'Q', 'ℂ': 'C', 'ℍ': 'H',
}
