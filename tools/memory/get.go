package memory

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/reefgw/reef/memory"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Limits of one memory_get.
const (
	DefaultLines = 120
	MaxLines     = 400
	MaxLineChars = 2000     // a longer line is cut
	MaxTextBytes = 64 << 10 // the text returned
)

// Get is memory_get.
type Get struct{}

var (
	_ tools.Tool       = (*Get)(nil)
	_ tools.Idempotent = (*Get)(nil)
)

// Idempotent: memory_get only reads.
func (*Get) Idempotent() {}

func (*Get) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name: "memory_get",
		Description: "Read lines of one memory file (MEMORY.md or memory/*.md), e.g. the range memory_search cited. " +
			fmt.Sprintf("Default %d lines from line 1, at most %d.", DefaultLines, MaxLines),
		Parameters: schema(map[string]any{
			"path":  map[string]any{"type": "string", "description": "memory file, relative to the workspace (e.g. memory/2025-03-14.md)"},
			"from":  map[string]any{"type": "integer", "description": "first line, 1-based (default 1)"},
			"lines": map[string]any{"type": "integer", "description": fmt.Sprintf("how many lines (default %d, at most %d)", DefaultLines, MaxLines)},
		}, "path"),
	}
}

type getArgs struct {
	Path  string `json:"path"`
	From  int    `json:"from"`
	Lines int    `json:"lines"`
}

// getResult is what memory_get returns.
type getResult struct {
	Path string `json:"path"`
	From int    `json:"from"`
	To   int    `json:"to"`             // last line returned; from-1 when none
	More bool   `json:"more,omitempty"` // the file goes on after To
	Text string `json:"text"`
}

func (*Get) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a getArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	rel, err := tools.WorkspacePath(call.Env.Workspace, a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	rel = filepath.ToSlash(rel)
	if memory.IsSessionPath(rel) {
		return tools.Result{}, fmt.Errorf("%s is a past conversation, not a file: its text is in memory_search's snippet", a.Path)
	}
	if !memory.IsMemoryPath(rel) {
		return tools.Result{}, fmt.Errorf("%s is not a memory file; memory_get reads MEMORY.md and memory/**/*.md only (use read for other files)", a.Path)
	}
	if !call.Env.Reach.Owner {
		return tools.Result{}, fmt.Errorf("%w: %s is not available in this conversation (memory notes are only for the owner's own chats)", tools.ErrPrivate, a.Path)
	}
	if a.From < 0 || a.Lines < 0 {
		return tools.Result{}, errors.New("from and lines must be positive")
	}
	from, n := max(a.From, 1), a.Lines
	if n == 0 {
		n = DefaultLines
	}
	n = min(n, MaxLines)
	root, err := os.OpenRoot(call.Env.Workspace)
	if err != nil {
		return tools.Result{}, fmt.Errorf("cannot open the workspace: %s", tools.ExplainPathError(call.Env.Workspace, err))
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return tools.Result{}, tools.ExplainPathError(a.Path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return tools.Result{}, tools.ExplainPathError(a.Path, err)
	}
	if !info.Mode().IsRegular() {
		return tools.Result{}, fmt.Errorf("%s is not a regular file", a.Path)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return tools.Result{}, fmt.Errorf("%s has %d hard links; refusing it because a hard link can lead outside the workspace", a.Path, st.Nlink)
	}
	res, err := readLines(ctx, f, from, n)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %v", a.Path, err)
	}
	res.Path = rel
	out, err := json.Marshal(res)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: string(out)}, nil
}

// readLines returns n lines from line from, each cut at MaxLineChars, the whole cut at
// MaxTextBytes. Lines are read as they come, so a huge file costs only what precedes them.
func readLines(ctx context.Context, r io.Reader, from, n int) (getResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	res := getResult{From: from, To: from - 1}
	var b strings.Builder
	for line := 1; ; line++ {
		if line%4096 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		text, err := readLine(br)
		if err == io.EOF && text == "" {
			return finish(res, &b), nil
		}
		if err != nil && err != io.EOF {
			return res, err
		}
		if line < from {
			continue
		}
		if line >= from+n || b.Len()+len(text) > MaxTextBytes {
			res.More = true
			return finish(res, &b), nil
		}
		if strings.IndexByte(text, 0) >= 0 {
			return res, errors.New("is a binary file (NUL bytes); memory_get reads text")
		}
		b.WriteString(text)
		b.WriteByte('\n')
		res.To = line
		if err == io.EOF {
			return finish(res, &b), nil
		}
	}
}

func finish(res getResult, b *strings.Builder) getResult {
	res.Text = strings.ToValidUTF8(b.String(), "\uFFFD")
	return res
}

// readLine reads one line without its newline, keeping at most MaxLineChars of it.
func readLine(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		chunk, err := br.ReadSlice('\n')
		if b.Len() < MaxLineChars*4 {
			b.Write(chunk[:min(len(chunk), MaxLineChars*4-b.Len())])
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		s := strings.TrimRight(b.String(), "\r\n")
		if utf8.RuneCountInString(s) > MaxLineChars {
			s = string([]rune(s)[:MaxLineChars]) + "…"
		}
		return s, err
	}
}
