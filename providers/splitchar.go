package providers

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A character can reach a client in two pieces: a proxy (or a server) that cuts a stream's
// deltas by bytes or by UTF-16 units puts half of a surrogate pair (`\uD83D` in one chunk's
// JSON, `\uDE00` in the next) or half of a UTF-8 sequence in each chunk. Decoded one chunk at
// a time, each half becomes U+FFFD. ChunkBytes keeps such halves as markers that survive JSON
// decoding, and a Joiner, fed the decoded deltas in order, puts them back together.
//
// The markers are a noncharacter followed by hex digits: U+FDD0 + 4 hex digits for a lone
// surrogate escape, U+FDD1 + 2 hex digits for a byte that is not valid UTF-8. Noncharacters
// are never text a model writes.
const (
	markSurrogate = '\uFDD0'
	markByte      = '\uFDD1'
)

// ChunkBytes is one streamed JSON chunk, ready to decode with go-json (the clients' streams
// do: it takes a quarter of encoding/json's time). JSON is UTF-8, but a server may send
// invalid bytes anyway, and a lone surrogate escape decodes to U+FFFD; ChunkBytes marks both
// (see Joiner) so that a character cut across two chunks is put back together, and a byte
// or surrogate that stays alone becomes U+FFFD, never invalid text (go-json would pass
// invalid bytes on into the answer, and a platform would refuse the reply).
func ChunkBytes(data string) []byte {
	if utf8.ValidString(data) && !hasSurrogateEscape(data) {
		return []byte(data)
	}
	var b strings.Builder
	b.Grow(len(data) + 16)
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\\' && i+1 < len(data):
			if data[i+1] != 'u' {
				b.WriteString(data[i : i+2])
				i += 2
				continue
			}
			n := escapeLen(data[i:])
			b.WriteString(markEscapes(data[i : i+n]))
			i += n
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(data[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\ufdd1` + hex2(c))
			} else {
				b.WriteString(data[i : i+size])
			}
			i += size
		}
	}
	return []byte(b.String())
}

// hasSurrogateEscape reports whether s may hold a \uD800–\uDFFF escape.
func hasSurrogateEscape(s string) bool {
	return strings.Contains(s, `\ud`) || strings.Contains(s, `\uD`)
}

// escapeLen is the length of the run of \uXXXX escapes at the start of s (at least 2: a
// malformed escape is left to the JSON decoder).
func escapeLen(s string) int {
	n := 0
	for len(s) >= n+6 && s[n] == '\\' && s[n+1] == 'u' && isHex4(s[n+2:n+6]) {
		n += 6
	}
	return max(n, 2)
}

// markEscapes rewrites a run of \uXXXX escapes, replacing each surrogate that is not part
// of a pair with a marker.
func markEscapes(run string) string {
	if len(run) < 6 {
		return run
	}
	var units []uint16
	for i := 0; i+6 <= len(run); i += 6 {
		v, _ := strconv.ParseUint(run[i+2:i+6], 16, 16)
		units = append(units, uint16(v))
	}
	var b strings.Builder
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case utf16.IsSurrogate(rune(u)) && u < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF:
			b.WriteString(run[i*6 : i*6+12])
			i++
		case utf16.IsSurrogate(rune(u)):
			b.WriteString(`\ufdd0` + strings.ToUpper(run[i*6+2:i*6+6]))
		default:
			b.WriteString(run[i*6 : i*6+6])
		}
	}
	return b.String()
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hex2(c byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// Joiner puts back together the characters a stream cut across its deltas (see ChunkBytes).
// Feed it one kind of text (the answer, the reasoning, one tool call's arguments) in order;
// it holds back a trailing half until the next delta, and Flush returns what is still held
// (U+FFFD: a half that never got its other half). The zero value is ready to use.
type Joiner struct {
	hi    rune   // a high surrogate waiting for its low half
	bytes []byte // the start of a UTF-8 sequence waiting for the rest
}

// Push returns the text of s that is ready, with cut characters joined.
func (j *Joiner) Push(s string) string {
	if j.hi == 0 && len(j.bytes) == 0 && !strings.ContainsRune(s, markSurrogate) && !strings.ContainsRune(s, markByte) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == markSurrogate && i+size+4 <= len(s) && isHex4(s[i+size:i+size+4]):
			v, _ := strconv.ParseUint(s[i+size:i+size+4], 16, 16)
			j.surrogate(&out, rune(v))
			size += 4
		case r == markByte && i+size+2 <= len(s) && isHex(s[i+size]) && isHex(s[i+size+1]):
			v, _ := strconv.ParseUint(s[i+size:i+size+2], 16, 8)
			j.flushHigh(&out)
			j.bytes = append(j.bytes, byte(v))
			size += 2
		default:
			j.flush(&out)
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	j.decodeBytes(&out, false)
	return out.String()
}

// Flush returns what is still held: U+FFFD for each half that never got its other half.
func (j *Joiner) Flush() string {
	var out strings.Builder
	j.flush(&out)
	return out.String()
}

// JoinText decodes the markers of a whole text (one that no later delta continues).
func JoinText(s string) string {
	var j Joiner
	return j.Push(s) + j.Flush()
}

func (j *Joiner) surrogate(out *strings.Builder, u rune) {
	j.decodeBytes(out, true)
	if u < 0xDC00 { // high
		j.flushHigh(out)
		j.hi = u
		return
	}
	if j.hi == 0 {
		out.WriteRune(utf8.RuneError)
		return
	}
	out.WriteRune(utf16.DecodeRune(j.hi, u))
	j.hi = 0
}

func (j *Joiner) flush(out *strings.Builder) {
	j.flushHigh(out)
	j.decodeBytes(out, true)
}

func (j *Joiner) flushHigh(out *strings.Builder) {
	if j.hi != 0 {
		out.WriteRune(utf8.RuneError)
		j.hi = 0
	}
}

// decodeBytes writes the complete characters of the held bytes (U+FFFD for invalid ones);
// unless all, it keeps an incomplete sequence at the end for the next delta.
func (j *Joiner) decodeBytes(out *strings.Builder, all bool) {
	b := j.bytes
	for len(b) > 0 {
		if !all && !utf8.FullRune(b) {
			break
		}
		r, size := utf8.DecodeRune(b)
		out.WriteRune(r) // RuneError for an invalid byte
		b = b[size:]
	}
	j.bytes = append(j.bytes[:0], b...)
}
