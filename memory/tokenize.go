package memory

import (
	"unicode"
	"unicode/utf8"
)

// maxTokenRunes caps one word token: longer runs of letters (base64, hashes) are cut.
const maxTokenRunes = 64

// Tokenize splits text into search terms: words (letters and digits, case folded) outside
// CJK scripts, and overlapping character bigrams inside runs of Han, Hiragana, Katakana or
// Hangul (a run of one character is its own term). Full-width forms are folded to their
// ASCII counterparts first, so "Ｒｕｓｔ" and "rust" are one term. Invalid UTF-8 separates.
func Tokenize(text string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) > 0 {
			if len(word) > maxTokenRunes {
				word = word[:maxTokenRunes]
			}
			out = append(out, string(word))
			word = word[:0]
		}
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
		case 1:
			out = append(out, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r == utf8.RuneError && size <= 1 {
			flushWord()
			flushCJK()
			continue
		}
		r = foldRune(r)
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r):
			flushCJK()
			word = append(word, r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// foldRune folds case and full-width ASCII forms (U+FF01..U+FF5E) and the ideographic space.
func foldRune(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		r -= 0xFEE0
	case r == 0x3000:
		r = ' '
	}
	return unicode.ToLower(r)
}

// isCJK reports the scripts written without spaces between words.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// estimateTokens is the chunker's token count: one per CJK character, one per four other
// characters (the estimate reef uses for context budgets).
func estimateTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		if isCJK(r) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + (other+3)/4
}
