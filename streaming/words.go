package streaming

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A partial or block draft shows an answer the model has not finished. It grows by words:
// it never ends inside a word or a UTF-8 sequence, and CJK text, which puts no spaces
// between words, grows by characters. The channels render the answer's Markdown (Telegram
// turns it into HTML with channels/telegram.RenderHTML, Discord and Feishu's md element
// render it themselves), so the unfinished end must not hold half a construct either: an
// open code fence would make the rest of the draft code on one edit and text on the next
// (Discord shows a lone ``` as text, Telegram a <pre> to the end), and a bold or code marker
// whose closing half has not come would show as a stray "**" that then disappears. The draft
// closes an open fence and holds back, on the line being written, a construct not closed yet.

// WordEnd is the length of the longest prefix of s that ends between two words: after or
// before whitespace, or after or before a CJK character. It never ends inside a word or a
// UTF-8 sequence; a text whose last rune is neither whitespace nor CJK (a word still being
// written) is cut before that word.
func WordEnd(s string) int {
	end := 0
	brk := false // the rune before i ends a word
	for i, r := range s {
		if i > 0 && (brk || isBreak(r)) {
			end = i
		}
		brk = isBreak(r)
	}
	if brk && utf8.FullRuneInString(s[lastRuneStart(s):]) {
		end = len(s)
	}
	return end
}

// isBreak reports whether r stands between words: whitespace, or a CJK character (a word
// of its own).
func isBreak(r rune) bool { return unicode.IsSpace(r) || isCJK(r) }

// isCJK reports whether r is written without spaces around it: Han, kana, Hangul, and CJK
// and full-width punctuation.
func isCJK(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFFEF:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// lastRuneStart is the index where the last (maybe incomplete) UTF-8 sequence of s starts.
func lastRuneStart(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return max(len(s)-1, 0)
}

// trimPartialRune takes away an incomplete UTF-8 sequence at the end of s.
func trimPartialRune(s string) string {
	if i := lastRuneStart(s); i < len(s) && !utf8.FullRuneInString(s[i:]) {
		return s[:i]
	}
	return s
}

// safeMarkdown makes text fit to show as a draft. open says that its last line is still
// being written: that line is cut before a code span, emphasis or link it opens and does not
// close (and left out when it is a fence line, whose info string may still grow). A code
// block still open is closed, or left out when nothing of its body has come yet.
func safeMarkdown(text string, open bool) string {
	lines := strings.Split(text, "\n")
	last := len(lines) - 1
	if t := strings.TrimLeft(lines[last], " "); open && (isFenceLine(t) || t != "" && strings.HasPrefix("```", t)) {
		lines, open = lines[:last], false
		last--
	}
	fence := -1 // the line of the open fence
	for i, l := range lines {
		if isFenceLine(l) {
			if fence < 0 {
				fence = i
			} else {
				fence = -1
			}
		}
	}
	switch {
	case fence >= 0:
		body := strings.TrimRight(strings.Join(lines[fence+1:], "\n"), " \n")
		if body == "" {
			return strings.Join(lines[:fence], "\n")
		}
		return strings.Join(append(lines[:fence+1], body, "```"), "\n")
	case open && last >= 0:
		lines[last] = lines[last][:openConstruct(lines[last])]
	}
	return strings.Join(lines, "\n")
}

// isFenceLine reports whether line opens or closes a code block, as the renderers see it:
// it starts with ``` after spaces.
func isFenceLine(line string) bool { return strings.HasPrefix(strings.TrimLeft(line, " "), "```") }

// openConstruct is where line opens a code span, emphasis or link that it does not close
// (len(line) when it opens none): what the renderers would show as stray markers until its
// closing half comes. Emphasis follows channels/telegram's rules: a run of up to three * or
// _ (two ~) followed by a non-space opens, a run of the same length after a non-space closes,
// an _ inside a word does neither.
func openConstruct(line string) int {
	for i := 0; i < len(line); {
		c := line[i]
		switch c {
		case '\\':
			if i+1 >= len(line) {
				return i // escapes what comes next
			}
			i += 2
			continue
		case '`':
			n := runLength(line[i:], c)
			k := strings.Index(line[i+n:], line[i:i+n])
			if k < 0 {
				return i
			}
			i += n + k + runLength(line[i+n+k:], c)
			continue
		case '*', '_', '~':
			n := runLength(line[i:], c)
			if i+n >= len(line) {
				return i // a marker at the end may open one
			}
			if opensEmphasis(line, i, n) {
				k := closeEmphasis(line, i, n)
				if k < 0 {
					return i
				}
				i = k + n
				continue
			}
			i += n
			continue
		case '[':
			if e := linkEnd(line[i:]); e < 0 {
				return i
			} else if e > 0 {
				i += e
				continue
			}
		}
		i++
	}
	return len(line)
}

func opensEmphasis(line string, i, n int) bool {
	c := line[i]
	if n > 3 || c == '~' && n != 2 || unicode.IsSpace(rune(line[i+n])) {
		return false
	}
	return c != '_' || i == 0 || !isWordByte(line[i-1])
}

// closeEmphasis is where the emphasis opened by the run line[i:i+n] closes, or -1.
func closeEmphasis(line string, i, n int) int {
	c := line[i]
	for j := i + n; j < len(line); {
		k := strings.Index(line[j:], line[i:i+n])
		if k < 0 {
			return -1
		}
		k += j
		m := runLength(line[k:], c)
		closes := m == n && k > i+n && !unicode.IsSpace(rune(line[k-1]))
		if c == '_' && k+n < len(line) && isWordByte(line[k+n]) {
			closes = false
		}
		if closes {
			return k
		}
		j = k + m
	}
	return -1
}

// linkEnd is the length of the link [text](url) at the start of s; 0 when s does not start
// one; -1 when it may start one that is not finished.
func linkEnd(s string) int {
	mid := strings.IndexByte(s, ']')
	switch {
	case mid < 0 || mid == len(s)-1:
		return -1
	case s[mid+1] != '(':
		return 0
	}
	end := strings.IndexByte(s[mid+2:], ')')
	if end < 0 {
		return -1
	}
	return mid + 2 + end + 1
}

func runLength(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// isWordByte reports whether b belongs to a word (a letter, digit or any byte of a
// multi-byte rune: snake_case and 变量_名 are not emphasis).
func isWordByte(b byte) bool {
	return b >= utf8.RuneSelf || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// clusterCut is n, or less so that r[:n] does not end inside a character as the reader sees
// it: before a combining mark, a variation selector, a skin tone or after a zero-width joiner
// (👨‍👩‍👧 is five runes), or between the two regional indicators of a flag.
func clusterCut(r []rune, n int) int {
	if n >= len(r) {
		return len(r)
	}
	for n > 0 && (extends(r[n]) || r[n-1] == '\u200d') {
		n--
	}
	ri := 0
	for i := n - 1; i >= 0 && isRegional(r[i]); i-- {
		ri++
	}
	if ri%2 == 1 && isRegional(r[n]) {
		n--
	}
	return n
}

func extends(r rune) bool {
	return r == '\u200d' || r >= 0xFE00 && r <= 0xFE0F || r >= 0x1F3FB && r <= 0x1F3FF ||
		unicode.In(r, unicode.Mn, unicode.Me) || r >= 0xE0020 && r <= 0xE007F // tag characters
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }
