package fs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Read is the read tool: a window of lines from a text file in the workspace.
type Read struct{ cfg Config }

var _ tools.Idempotent = (*Read)(nil)

// NewRead returns the read tool.
func NewRead(cfg Config) *Read { return &Read{cfg: cfg.withDefaults()} }

type readArgs struct {
	pathArgs
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// Spec describes read to the model.
// Idempotent: it changes nothing, so a call a crash interrupted is run again.
func (*Read) Idempotent() {}

func (t *Read) Spec() messages.ToolSpec {
	props := pathProps("File to read, relative to the workspace.")
	props["offset"] = map[string]any{"type": "integer", "minimum": 1,
		"description": "First line to return, counting from 1. Default 1."}
	props["limit"] = map[string]any{"type": "integer", "minimum": 1,
		"description": fmt.Sprintf("Most lines to return. Default and maximum %d.", t.cfg.ReadLines)}
	return messages.ToolSpec{
		Name: "read",
		Description: fmt.Sprintf("Show the text of a workspace file, line by line. Long files come in windows "+
			"of up to %d lines or %s; the result ends with the offset to ask for next. Lines longer than %d "+
			"characters are cut. Binary files are refused.", t.cfg.ReadLines, size(int64(t.cfg.ReadBytes)), t.cfg.LineChars),
		Parameters: schema(map[string]any{"type": "object", "properties": props, "additionalProperties": false}),
	}
}

// Run reads the requested window.
func (t *Read) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a readArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := a.get("")
	if err != nil {
		return tools.Result{}, err
	}
	switch {
	case a.Offset < 0:
		return tools.Result{}, errors.New("offset must be 1 or more")
	case a.Limit < 0:
		return tools.Result{}, errors.New("limit must be 1 or more")
	}
	if a.Offset == 0 {
		a.Offset = 1
	}
	if a.Limit == 0 || a.Limit > t.cfg.ReadLines {
		a.Limit = t.cfg.ReadLines
	}
	root, rel, err := t.cfg.openForRead(call.Env, p, true)
	if err != nil {
		return tools.Result{}, err
	}
	defer root.Close()
	f, info, err := openRegular(root, rel, p)
	if err != nil {
		return tools.Result{}, err
	}
	defer f.Close()

	head := make([]byte, 8<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return tools.Result{}, tools.ExplainPathError(p, err)
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return tools.Result{}, fmt.Errorf("%s is a binary file (%d bytes); read only shows text", p, info.Size())
	}
	if n == 0 {
		return tools.Result{Content: fmt.Sprintf("[%s is empty]", p)}, nil
	}
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head[:n]), f), 64<<10)
	return t.window(ctx, r, p, a.Offset, a.Limit)
}

// window collects lines offset..offset+limit-1 within the byte budget, then counts the rest.
func (t *Read) window(ctx context.Context, r *bufio.Reader, p string, offset, limit int) (tools.Result, error) {
	var (
		out      strings.Builder
		lineNo   int  // lines seen so far
		last     int  // last line shown
		byteFull bool // the byte budget closed the window early
		buf      []byte
	)
	for {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return tools.Result{}, errors.New("read was cancelled")
		}
		inWindow := lineNo+1 >= offset && lineNo+1 < offset+limit && !byteFull
		keep := 0
		if inWindow {
			keep = t.cfg.LineChars * utf8.UTFMax
		}
		line, cut, more, err := nextLine(r, keep, buf)
		if err != nil && err != io.EOF {
			return tools.Result{}, tools.ExplainPathError(p, err)
		}
		if !more {
			break
		}
		lineNo++
		if !inWindow {
			continue
		}
		buf = line[:0]
		text := t.render(line, cut)
		if last != 0 && out.Len()+len(text)+1 > t.cfg.ReadBytes {
			byteFull = true
			continue
		}
		if last != 0 {
			out.WriteByte('\n')
		}
		out.WriteString(text)
		last = lineNo
	}
	total := lineNo
	if last == 0 {
		return tools.Result{}, fmt.Errorf("offset %d is past the end of %s, which has %d lines", offset, p, total)
	}
	if last < total {
		capped := ""
		if byteFull {
			capped = fmt.Sprintf("output capped at %s; ", size(int64(t.cfg.ReadBytes)))
		}
		fmt.Fprintf(&out, "\n\n[lines %d-%d of %d; %scall read with offset=%d to continue]", offset, last, total, capped, last+1)
	}
	return tools.Result{Content: out.String()}, nil
}

// render turns one raw line into valid UTF-8 of at most LineChars characters.
func (t *Read) render(line []byte, cut bool) string {
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if utf8.RuneCountInString(s) > t.cfg.LineChars {
		i, n := 0, 0
		for i = range s {
			if n == t.cfg.LineChars {
				break
			}
			n++
		}
		s, cut = s[:i], true
	}
	if cut {
		s += fmt.Sprintf(" […line cut after %d characters]", t.cfg.LineChars)
	}
	return s
}

// nextLine reads one line, keeping at most keep bytes of it (without "\n" or "\r\n") in buf.
// cut reports that bytes were dropped; more that there was a line at all.
func nextLine(r *bufio.Reader, keep int, buf []byte) (line []byte, cut, more bool, err error) {
	line = buf[:0]
	total := 0
	for {
		chunk, err := r.ReadSlice('\n')
		more = more || len(chunk) > 0
		full := err == bufio.ErrBufferFull
		if !full {
			chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		}
		total += len(chunk)
		if room := keep - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		if full {
			continue
		}
		if total == len(line) && bytes.HasSuffix(line, []byte("\r")) {
			line = line[:len(line)-1]
			total--
		}
		cut = total > len(line)
		if err == io.EOF && more {
			err = nil
		}
		return line, cut, more, err
	}
}
