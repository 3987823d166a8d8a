package fs

import (
	"fmt"
	"strings"
)

// applyHunks returns content with the hunks applied in order. Lines are found exactly first,
// then ignoring trailing whitespace, then ignoring surrounding whitespace, as the reference
// does. A file with Windows line ends keeps them. The error names the hunk that did not apply.
func applyHunks(content string, hunks []patchHunk) (string, error) {
	eol := "\n"
	if strings.Contains(content, "\r\n") {
		eol = "\r\n"
	}
	lines := strings.Split(content, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	// A final line end yields one empty last element; the reference keeps it as a line, so a
	// hunk whose old text ends with a blank line can still match at the end.
	type change struct {
		at, n int
		with  []string
	}
	var changes []change
	next := 0
	for i, h := range hunks {
		where := fmt.Sprintf("hunk %d (patch line %d)", i+1, h.line)
		if h.context != "" {
			at := seek(lines, []string{h.context}, next, false)
			if at < 0 {
				return "", fmt.Errorf("%s: the @@ line %q was not found", where, clip(h.context))
			}
			next = at + 1
		}
		if len(h.old) == 0 { // pure addition: at the end of the file
			at := len(lines)
			if at > 0 && lines[at-1] == "" {
				at--
			}
			changes = append(changes, change{at: at, with: h.new})
			continue
		}
		old, nw := h.old, h.new
		at := seek(lines, old, next, h.eof)
		if at < 0 && old[len(old)-1] == "" {
			old = old[:len(old)-1]
			if len(nw) > 0 && nw[len(nw)-1] == "" {
				nw = nw[:len(nw)-1]
			}
			at = seek(lines, old, next, h.eof)
		}
		if at < 0 {
			return "", fmt.Errorf("%s: these lines were not found%s:\n%s", where, after(h, next), strings.Join(clipLines(h.old), "\n"))
		}
		changes = append(changes, change{at: at, n: len(old), with: nw})
		next = at + len(old)
	}
	out := make([]string, 0, len(lines))
	pos := 0
	for _, c := range changes {
		if c.at < pos {
			return "", fmt.Errorf("hunks overlap; order them as they appear in the file")
		}
		out = append(append(out, lines[pos:c.at]...), c.with...)
		pos = c.at + c.n
	}
	out = append(out, lines[pos:]...)
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return "", nil
	}
	return strings.Join(out, eol) + eol, nil
}

func after(h patchHunk, next int) string {
	if next > 0 {
		return fmt.Sprintf(" after line %d", next)
	}
	return ""
}

func clipLines(ls []string) []string {
	if len(ls) > 8 {
		ls = append(ls[:8:8], "…")
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = "  " + clip(l)
	}
	return out
}

// seek finds pattern in lines at or after start and returns its index, or -1. With eof it
// looks at the end of the file first. Each pass is more tolerant of whitespace than the last.
func seek(lines, pattern []string, start int, eof bool) int {
	if len(pattern) > len(lines) {
		return -1
	}
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t\r") },
		strings.TrimSpace,
	} {
		if eof {
			if at := len(lines) - len(pattern); at >= start && match(lines[at:], pattern, norm) {
				return at
			}
			// The file's final line end leaves an empty last line.
			if at := len(lines) - 1 - len(pattern); at >= start && lines[len(lines)-1] == "" && match(lines[at:], pattern, norm) {
				return at
			}
		}
		for at := start; at+len(pattern) <= len(lines); at++ {
			if match(lines[at:], pattern, norm) {
				return at
			}
		}
	}
	return -1
}

func match(lines, pattern []string, norm func(string) string) bool {
	for i, p := range pattern {
		if norm(lines[i]) != norm(p) {
			return false
		}
	}
	return true
}
