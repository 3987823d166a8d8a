package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// List is the ls tool: the entries of a workspace folder.
type List struct{ cfg Config }

var _ tools.Idempotent = (*List)(nil)

// NewList returns the ls tool.
func NewList(cfg Config) *List { return &List{cfg: cfg.withDefaults()} }

type listArgs struct {
	pathArgs
}

// Spec describes ls to the model.
// Idempotent: it changes nothing, so a call a crash interrupted is run again.
func (*List) Idempotent() {}

func (t *List) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name: "ls",
		Description: fmt.Sprintf("List a workspace folder: one entry a line, sorted by name, folders ending in \"/\", "+
			"files with their size, symlinks with their target. At most %d entries are shown.", t.cfg.ListEntries),
		Parameters: schema(map[string]any{"type": "object",
			"properties":           pathProps("Folder to list, relative to the workspace. Default: the workspace itself."),
			"additionalProperties": false}),
	}
}

// Run lists the folder.
func (t *List) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a listArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := a.get(".")
	if err != nil {
		return tools.Result{}, err
	}
	root, rel, err := t.cfg.openForRead(call.Env, p, false)
	if err != nil {
		return tools.Result{}, err
	}
	defer root.Close()
	// O_NONBLOCK: opening a FIFO by mistake must not wait for a writer.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return tools.Result{}, tools.ExplainPathError(p, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return tools.Result{}, tools.ExplainPathError(p, err)
	}
	if !info.IsDir() {
		return tools.Result{}, fmt.Errorf("%s is not a folder; use read for files", p)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return tools.Result{}, tools.ExplainPathError(p, err)
	}
	if ctx.Err() != nil {
		return tools.Result{}, errors.New("ls was cancelled")
	}
	if inWorkspace(call.Env, root) { // a guest's run sees no private file of the owner's
		entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return !call.Env.Reach.Shows(filepath.Join(rel, e.Name())) })
	}
	if len(entries) == 0 {
		return tools.Result{Content: fmt.Sprintf("[%s is empty]", p)}, nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	shown := entries[:min(len(entries), t.cfg.ListEntries)]
	var out strings.Builder
	for _, e := range shown {
		out.WriteString(describe(root, rel, e))
		out.WriteByte('\n')
	}
	if len(shown) < len(entries) {
		fmt.Fprintf(&out, "\n[showing %d of %d entries; list a subfolder or read a file by name to see more]\n",
			len(shown), len(entries))
	}
	return tools.Result{Content: strings.TrimSuffix(out.String(), "\n")}, nil
}

// describe renders one entry: "name/", "name (N bytes)", "name -> target" or "name (a named pipe)".
func describe(root *os.Root, dir string, e os.DirEntry) string {
	name := strings.ToValidUTF8(e.Name(), "\uFFFD")
	switch t := e.Type(); {
	case t.IsDir():
		return name + "/"
	case t&os.ModeSymlink != 0:
		target, err := root.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			return name + " -> ?"
		}
		return name + " -> " + strings.ToValidUTF8(target, "\uFFFD")
	case t.IsRegular():
		info, err := e.Info()
		if err != nil {
			return name
		}
		return fmt.Sprintf("%s (%s)", name, size(info.Size()))
	default:
		return fmt.Sprintf("%s (%s)", name, tools.FileKind(t))
	}
}

// inWorkspace reports whether root is the workspace rather than a read-only skills folder.
func inWorkspace(env tools.Env, root *os.Root) bool {
	return root.Name() == env.Workspace
}
