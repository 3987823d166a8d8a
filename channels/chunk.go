package channels

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Measure counts the length of text the way a platform does.
type Measure func(string) int

// Runes counts Unicode code points (Discord, Feishu).
func Runes(s string) int { return utf8.RuneCountInString(s) }

// UTF16 counts UTF-16 code units (Telegram): runes outside the BMP count twice.
func UTF16(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Split cuts text into chunks that each measure at most limit. The chunks concatenate back to
// text exactly. A cut never falls inside a rune, a surrogate pair or a grapheme cluster
// (combining marks, emoji modifiers and joiner sequences stay whole), and it prefers, in
// order: a blank line outside a code fence, a line end outside a fence, a line end inside a
// fence, a space, anything else. Use BalanceFences on the result before sending.
func Split(text string, limit int, measure Measure) []string {
	if limit <= 0 || measure(text) <= limit {
		return []string{text}
	}
	var chunks []string
	for text != "" {
		if measure(text) <= limit {
			chunks = append(chunks, text)
			break
		}
		cut := bestCut(text, limit, measure)
		chunks = append(chunks, text[:cut])
		text = text[cut:]
	}
	return chunks
}

// bestCut returns the byte offset where the next chunk of text should end.
func bestCut(text string, limit int, measure Measure) int {
	// fit is the longest prefix (in bytes, at a cluster boundary) that measures <= limit.
	fit, units := 0, 0
	wide := measure("\U00010000") // 2 when astral runes count double (UTF-16)
	for i, r := range text {
		w := 1
		if r >= 0x10000 {
			w = wide
		}
		if units+w > limit {
			break
		}
		units += w
		if next := i + utf8.RuneLen(r); next >= len(text) || clusterBoundary(text, next) {
			fit = next
		}
	}
	if fit == 0 { // a single cluster longer than the limit: cut at a rune boundary
		_, size := utf8.DecodeRuneInString(text)
		return size
	}
	prefix := text[:fit]
	inFence := fenceOpenAt(prefix)
	best, bestRank := fit, 5
	for i := 0; i < fit; i++ {
		if prefix[i] != '\n' && prefix[i] != ' ' {
			continue
		}
		end := i + 1
		var rank int
		switch {
		case prefix[i] == '\n' && strings.HasPrefix(prefix[end:], "\n") && !inFence[end]:
			rank, end = 1, end+1
		case prefix[i] == '\n' && !inFence[end]:
			rank = 2
		case prefix[i] == '\n':
			rank = 3
		default:
			rank = 4
		}
		if end <= fit && (rank < bestRank || rank == bestRank && end > best) && end >= fit/3 {
			best, bestRank = end, rank
		}
	}
	return best
}

// fenceOpenAt reports, for each byte offset of s, whether a ``` fence is open there.
func fenceOpenAt(s string) []bool {
	open := make([]bool, len(s)+1)
	inFence := false
	lineStart := 0
	for i := 0; i <= len(s); i++ {
		open[i] = inFence
		if i == len(s) || s[i] == '\n' {
			if strings.HasPrefix(strings.TrimLeft(s[lineStart:i], " "), "```") {
				inFence = !inFence
			}
			lineStart = i + 1
			if i < len(s) {
				open[i+1] = inFence
			}
		}
	}
	return open
}

// clusterBoundary reports whether byte offset i of s (a rune boundary) is between two
// grapheme clusters, approximately: not before a combining mark, variation selector, emoji
// modifier or zero-width joiner, not after a joiner, and not inside a regional-indicator pair.
func clusterBoundary(s string, i int) bool {
	next, _ := utf8.DecodeRuneInString(s[i:])
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	switch {
	case prev == '\u200d', next == '\u200d':
		return false
	case unicode.Is(unicode.Mn, next), unicode.Is(unicode.Me, next), unicode.Is(unicode.Mc, next):
		return false
	case next >= 0xFE00 && next <= 0xFE0F, next >= 0xE0100 && next <= 0xE01EF:
		return false
	case next >= 0x1F3FB && next <= 0x1F3FF: // skin tones
		return false
	case next >= 0xE0020 && next <= 0xE007F: // emoji tag sequences
		return false
	case prev == '\r' && next == '\n':
		return false
	case isRegional(prev) && isRegional(next):
		n := 0 // split only between complete pairs
		for j := i; j > 0; {
			r, size := utf8.DecodeLastRuneInString(s[:j])
			if !isRegional(r) {
				break
			}
			n++
			j -= size
		}
		return n%2 == 0
	}
	return true
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// BalanceFences makes every chunk render on its own: a chunk that ends inside a ``` block
// gets a closing fence, and the next chunk reopens it with the same info string. Split
// leaves room for this only if the caller passes limit minus FenceReserve.
func BalanceFences(chunks []string) []string {
	out := make([]string, len(chunks))
	reopen := ""
	for i, c := range chunks {
		body := reopen + c
		open, info := openFence(body)
		if open {
			if !strings.HasSuffix(body, "\n") {
				body += "\n"
			}
			body += "```"
			reopen = info + "\n"
		} else {
			reopen = ""
		}
		out[i] = body
	}
	return out
}

// FenceReserve is the room BalanceFences may add to a chunk, beyond the fence info string.
const FenceReserve = 8

// openFence reports whether s ends inside a fence, and the fence line that opened it.
func openFence(s string) (bool, string) {
	open, info := false, ""
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if strings.HasPrefix(t, "```") {
			open = !open
			if open {
				info = t
			}
		}
	}
	return open, info
}

// DefaultMaxChunks is how many messages one reply is split into at most when its Outbound
// sets no MaxChunks.
const DefaultMaxChunks = 20

// CapChunks keeps at most max chunks (DefaultMaxChunks when max <= 0): past it, the first
// max-1 are kept and the last place holds note(the number of chunks left out), so a runaway
// answer cannot flood a chat.
func CapChunks[T any](chunks []T, max int, note func(omitted int) T) []T {
	if max <= 0 {
		max = DefaultMaxChunks
	}
	if len(chunks) <= max {
		return chunks
	}
	out := append(chunks[:max-1:max-1], note(len(chunks)-(max-1)))
	return out
}

// OmittedNote is the text that replaces the chunks CapChunks leaves out.
func OmittedNote(omitted int) string {
	return fmt.Sprintf("[reef: this reply was too long to send in full; the remaining %d parts were left out]", omitted)
}
