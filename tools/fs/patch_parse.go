package fs

import (
	"fmt"
	"strings"
)

// The markers of the patch format apply_patch reads: the multi-file format of OpenAI's Codex
// (codex-rs/apply-patch), which OpenAI models are trained to write.
const (
	beginPatch   = "*** Begin Patch"
	endPatch     = "*** End Patch"
	addFile      = "*** Add File: "
	deleteFile   = "*** Delete File: "
	updateFile   = "*** Update File: "
	moveTo       = "*** Move to: "
	endOfFile    = "*** End of File"
	hunkMarker   = "@@"
	hunkMarkerSp = "@@ "
)

// patchOp is one file section of a patch.
type patchOp struct {
	kind   opKind
	path   string
	moveTo string      // update only; "" keeps the path
	add    string      // add only: the new file's text
	hunks  []patchHunk // update only
}

type opKind int

const (
	opAdd opKind = iota
	opDelete
	opUpdate
)

// patchHunk is one @@ section of an update: the lines to find (old) and what replaces them (new).
type patchHunk struct {
	context string // the text after "@@ ", a line to find before old; "" for none
	old     []string
	new     []string
	eof     bool // "*** End of File": old must be at the end of the file
	line    int  // line of the patch where the hunk starts, for errors
}

// parsePatch reads a whole patch. Errors name the patch line that is wrong.
func parsePatch(text string) ([]patchOp, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	lines = unwrapHeredoc(trimBlank(lines))
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginPatch {
		return nil, fmt.Errorf("the patch must start with a %q line", beginPatch)
	}
	if strings.TrimSpace(lines[len(lines)-1]) != endPatch {
		return nil, fmt.Errorf("the patch must end with a %q line", endPatch)
	}
	p := patchParser{lines: lines[:len(lines)-1], i: 1}
	var ops []patchOp
	for p.i < len(p.lines) {
		if strings.TrimSpace(p.lines[p.i]) == "" {
			p.i++
			continue
		}
		op, err := p.fileOp()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("the patch changes no file: add *** Add File:, *** Update File: or *** Delete File: sections")
	}
	return ops, nil
}

// trimBlank drops blank lines around the patch.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// unwrapHeredoc accepts a patch still wrapped in the shell heredoc models sometimes copy
// from Codex's examples (<<'EOF' ... EOF), as the reference does.
func unwrapHeredoc(lines []string) []string {
	if len(lines) >= 4 {
		first := strings.TrimSpace(lines[0])
		if (first == "<<EOF" || first == "<<'EOF'" || first == `<<"EOF"`) && strings.TrimSpace(lines[len(lines)-1]) == "EOF" {
			return lines[1 : len(lines)-1]
		}
	}
	return lines
}

type patchParser struct {
	lines []string
	i     int
}

// fileOp reads one file section.
func (p *patchParser) fileOp() (patchOp, error) {
	line := strings.TrimSpace(p.lines[p.i])
	n := p.i + 1
	p.i++
	if path, ok := strings.CutPrefix(line, addFile); ok {
		var b strings.Builder
		for p.i < len(p.lines) && !strings.HasPrefix(p.lines[p.i], "***") {
			l, ok := strings.CutPrefix(p.lines[p.i], "+")
			if !ok {
				return patchOp{}, fmt.Errorf("patch line %d: every line of an added file starts with +; got %q", p.i+1, clip(p.lines[p.i]))
			}
			b.WriteString(l)
			b.WriteByte('\n')
			p.i++
		}
		return patchOp{kind: opAdd, path: strings.TrimSpace(path), add: b.String()}, nil
	}
	if path, ok := strings.CutPrefix(line, deleteFile); ok {
		return patchOp{kind: opDelete, path: strings.TrimSpace(path)}, nil
	}
	path, ok := strings.CutPrefix(line, updateFile)
	if !ok {
		return patchOp{}, fmt.Errorf("patch line %d: %q is not a file header; use *** Add File:, *** Update File: or *** Delete File:", n, clip(line))
	}
	op := patchOp{kind: opUpdate, path: strings.TrimSpace(path)}
	if p.i < len(p.lines) {
		if to, ok := strings.CutPrefix(strings.TrimSpace(p.lines[p.i]), moveTo); ok {
			op.moveTo = strings.TrimSpace(to)
			p.i++
		}
	}
	for p.i < len(p.lines) {
		if strings.TrimSpace(p.lines[p.i]) == "" { // blank lines between hunks
			p.i++
			continue
		}
		if strings.HasPrefix(p.lines[p.i], "***") {
			break
		}
		h, err := p.hunk(len(op.hunks) == 0)
		if err != nil {
			return patchOp{}, err
		}
		op.hunks = append(op.hunks, h)
	}
	if len(op.hunks) == 0 && op.moveTo == "" {
		return patchOp{}, fmt.Errorf("patch line %d: update of %s has no hunks", n, op.path)
	}
	return op, nil
}

// hunk reads one @@ section. The first hunk of a file may leave out its @@ line.
func (p *patchParser) hunk(first bool) (patchHunk, error) {
	h := patchHunk{line: p.i + 1}
	switch l := strings.TrimRight(p.lines[p.i], " \t"); {
	case l == hunkMarker:
		p.i++
	case strings.HasPrefix(l, hunkMarkerSp):
		h.context = strings.TrimPrefix(l, hunkMarkerSp)
		p.i++
	case !first:
		return h, fmt.Errorf("patch line %d: expected a hunk starting with @@, got %q", p.i+1, clip(l))
	}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if strings.TrimSpace(l) == endOfFile {
			h.eof = true
			p.i++
			break
		}
		if strings.HasPrefix(l, "***") || strings.HasPrefix(l, hunkMarker) {
			break
		}
		switch {
		case l == "": // an empty context line whose leading space was lost
			h.old, h.new = append(h.old, ""), append(h.new, "")
		case l[0] == ' ':
			h.old, h.new = append(h.old, l[1:]), append(h.new, l[1:])
		case l[0] == '-':
			h.old = append(h.old, l[1:])
		case l[0] == '+':
			h.new = append(h.new, l[1:])
		default:
			return h, fmt.Errorf("patch line %d: a hunk line starts with ' ', '-' or '+'; got %q", p.i+1, clip(l))
		}
		p.i++
	}
	if len(h.old) == 0 && len(h.new) == 0 {
		return h, fmt.Errorf("patch line %d: empty hunk", h.line)
	}
	return h, nil
}

// clip shortens a line quoted in an error.
func clip(s string) string {
	if len(s) > 120 {
		return strings.ToValidUTF8(s[:120], "") + "…"
	}
	return s
}
