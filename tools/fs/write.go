package fs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Write is the write tool: create or replace a file in the workspace.
type Write struct{ cfg Config }

var _ tools.Tool = (*Write)(nil)

// NewWrite returns the write tool.
func NewWrite(cfg Config) *Write { return &Write{cfg: cfg.withDefaults()} }

type writeArgs struct {
	pathArgs
	Content *string `json:"content"`
}

// Spec describes write to the model.
func (t *Write) Spec() messages.ToolSpec {
	props := pathProps("File to create or replace, relative to the workspace. Missing folders are created.")
	props["content"] = map[string]any{"type": "string",
		"description": fmt.Sprintf("The whole new text of the file, at most %s.", size(int64(t.cfg.WriteBytes)))}
	return messages.ToolSpec{
		Name: "write",
		Description: "Create a workspace file or replace all of its text. The file is swapped in whole, so " +
			"readers never see half of it. To change part of an existing file, use edit instead.",
		Parameters: schema(map[string]any{"type": "object", "properties": props,
			"required": []string{"content"}, "additionalProperties": false}),
	}
}

// Run writes the file.
func (t *Write) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a writeArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := a.get("")
	if err != nil {
		return tools.Result{}, err
	}
	if a.Content == nil {
		return tools.Result{}, errors.New(`content is required (give "" for an empty file)`)
	}
	if len(*a.Content) > t.cfg.WriteBytes {
		return tools.Result{}, fmt.Errorf("content is %d bytes, more than the %s write takes; write a smaller file",
			len(*a.Content), size(int64(t.cfg.WriteBytes)))
	}
	root, rel, err := openWorkspace(call.Env, p)
	if err != nil {
		return tools.Result{}, err
	}
	defer root.Close()
	if rel == "." {
		return tools.Result{}, errors.New("path is the workspace itself; give a file name")
	}
	perm := os.FileMode(0o644)
	verb := "created"
	info, err := root.Lstat(rel)
	switch {
	case err == nil:
		if info.Mode()&os.ModeSymlink != 0 {
			// Say where the link leads when that is out of the workspace.
			if _, err := root.Stat(rel); err != nil {
				return tools.Result{}, tools.ExplainPathError(p, err)
			}
		}
		if err := tools.CheckRegular(info, p); err != nil {
			return tools.Result{}, err
		}
		perm, verb = info.Mode().Perm(), "replaced"
	case errors.Is(err, iofs.ErrNotExist):
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return tools.Result{}, tools.ExplainPathError(filepath.Dir(p), err)
			}
		}
	default:
		return tools.Result{}, tools.ExplainPathError(p, err)
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, errors.New("write was cancelled; nothing was written")
	}
	if err := atomicWrite(root, rel, []byte(*a.Content), perm); err != nil {
		return tools.Result{}, tools.ExplainPathError(p, err)
	}
	t.cfg.changed(ctx, call.Env, rel)
	return tools.Result{Content: fmt.Sprintf("%s %s: wrote %d bytes", verb, rel, len(*a.Content))}, nil
}

// atomicWrite writes data to a temporary file beside rel, flushes it and renames it over rel,
// all inside root, so the file is either the old one or the new one, never a mix.
func atomicWrite(root *os.Root, rel string, data []byte, perm os.FileMode) (err error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".reef-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return root.Rename(tmp, rel)
}
