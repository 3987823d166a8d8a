package web

import (
	"strings"
	"unicode"
)

// mdWriter writes Markdown (or plain text) the way a browser lays text out: runs of white
// space in text become one space, none at the start of a line; blocks are separated by one
// blank line however many block boundaries meet; lines inside lists and quotes get their
// prefixes.
type mdWriter struct {
	b       strings.Builder
	prefix  []string
	newline int  // line breaks asked for and not yet written (at most 2 are)
	depth   int  // prefixes in force when the first of them was asked for
	space   bool // a space asked for and not yet written
}

func (w *mdWriter) block() { w.breakLine(2) }
func (w *mdWriter) line()  { w.breakLine(1) }

func (w *mdWriter) breakLine(n int) {
	if w.newline == 0 {
		w.depth = len(w.prefix)
	}
	w.newline = max(w.newline, n)
}

func (w *mdWriter) push(p string) { w.prefix = append(w.prefix, p) }
func (w *mdWriter) pop() {
	w.prefix = w.prefix[:len(w.prefix)-1]
	w.depth = min(w.depth, len(w.prefix))
}

// flush writes the pending line breaks (with the prefixes) or the pending space.
func (w *mdWriter) flush() {
	if w.b.Len() == 0 {
		w.newline, w.space = 0, false
		return
	}
	if w.newline > 0 {
		// A blank line belongs to the blocks on both sides: it gets the prefixes they share.
		blank := strings.TrimRight(strings.Join(w.prefix[:min(w.depth, len(w.prefix))], ""), " ")
		p := strings.Join(w.prefix, "")
		for i := 0; i < w.newline; i++ {
			w.b.WriteByte('\n')
			if i < w.newline-1 {
				w.b.WriteString(blank)
			}
		}
		w.b.WriteString(p)
		w.newline, w.space = 0, false
		return
	}
	if w.space {
		w.b.WriteByte(' ')
		w.space = false
	}
}

// text writes s with its white space collapsed.
func (w *mdWriter) text(s string) {
	for _, r := range s {
		if unicode.IsSpace(r) {
			w.space = true
			continue
		}
		w.flush()
		w.b.WriteRune(r)
	}
}

// marker writes s as it is (Markdown syntax, already collapsed text).
func (w *mdWriter) marker(s string) {
	if s == "" {
		return
	}
	w.flush()
	w.b.WriteString(s)
}

// raw writes preformatted text line by line, keeping its white space.
func (w *mdWriter) raw(s string) {
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			w.line()
		}
		w.flush()
		if w.b.Len() == 0 && l == "" {
			continue
		}
		w.b.WriteString(strings.TrimRight(l, " \t\r"))
	}
}

func (w *mdWriter) String() string {
	return strings.TrimSpace(w.b.String())
}
