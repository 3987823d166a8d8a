package fake

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
)

// SplitPieces cuts the pieces of a streamed text as a proxy that cuts by UTF-16 units does:
// each character outside the BMP (an emoji) is cut in two, its high surrogate ending one
// piece and its low surrogate starting the next. The halves are marked in the pieces; a fake
// turns the marks into the JSON escapes `\uD83D` and `\uDE00` with WireEscapes after encoding
// a chunk.
func SplitPieces(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		var cur strings.Builder
		for _, r := range p {
			if r <= 0xFFFF {
				cur.WriteRune(r)
				continue
			}
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&cur, "⟪%04X⟫", hi)
			out = append(out, cur.String())
			cur.Reset()
			fmt.Fprintf(&cur, "⟪%04X⟫", lo)
		}
		if cur.Len() > 0 {
			out = append(out, cur.String())
		}
	}
	return out
}

var halfMark = regexp.MustCompile(`⟪([0-9A-F]{4})⟫`)

// WireEscapes turns the marks SplitPieces left in an encoded chunk into JSON \u escapes.
func WireEscapes(chunk []byte) []byte {
	if !bytes.Contains(chunk, []byte("⟪")) {
		return chunk
	}
	return halfMark.ReplaceAll(chunk, []byte(`\u$1`))
}

// Split returns pieces cut as SplitPieces does when the reply sets SplitChars, else pieces
// unchanged: the HTTP fakes call it on every text they stream.
func (r Reply) Split(pieces []string) []string {
	if r.SplitChars {
		return SplitPieces(pieces)
	}
	return pieces
}
