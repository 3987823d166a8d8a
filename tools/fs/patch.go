package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Patch is the apply_patch tool: add, change, move and delete several workspace files with
// one patch in the format OpenAI's models write (*** Begin Patch ... *** End Patch).
type Patch struct{ cfg Config }

var _ tools.Tool = (*Patch)(nil)

// NewPatch returns the apply_patch tool.
func NewPatch(cfg Config) *Patch { return &Patch{cfg: cfg.withDefaults()} }

type patchArgs struct {
	Input *string `json:"input"`
}

const patchDescription = `Change workspace files with one patch: add, update, move and delete files at once.
All of it applies or none of it does. Format:
*** Begin Patch
*** Add File: path        (every line of the new file starts with +)
*** Delete File: path
*** Update File: path
*** Move to: new/path     (optional, right after Update)
@@ a line just before the change (optional)
 context line (starts with a space)
-removed line
+added line
*** End of File           (optional: the hunk ends at the end of the file)
*** End Patch
Give 3 lines of context around each change; paths are relative to the workspace.`

// Spec describes apply_patch to the model.
func (t *Patch) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name:        "apply_patch",
		Description: patchDescription,
		Parameters: schema(map[string]any{"type": "object", "properties": map[string]any{
			"input": map[string]any{"type": "string", "description": "The whole patch, from *** Begin Patch to *** End Patch."},
		}, "required": []string{"input"}, "additionalProperties": false}),
	}
}

// planned is one file the patch writes or removes, computed before anything is touched.
type planned struct {
	rel     string
	data    []byte // nil: remove the file
	perm    os.FileMode
	summary string
}

// Run applies the patch: it reads every file and computes every new content first, and
// writes only when all hunks of all files applied.
func (t *Patch) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a patchArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	if a.Input == nil || strings.TrimSpace(*a.Input) == "" {
		return tools.Result{}, errors.New("input is required: the patch text from *** Begin Patch to *** End Patch")
	}
	ops, err := parsePatch(*a.Input)
	if err != nil {
		return tools.Result{}, fmt.Errorf("apply_patch: %w; nothing was changed", err)
	}
	root, _, err := openWorkspace(call.Env, ".")
	if err != nil {
		return tools.Result{}, err
	}
	defer root.Close()
	plan, err := t.plan(root, call.Env, ops)
	if err != nil {
		return tools.Result{}, fmt.Errorf("apply_patch: %w; nothing was changed", err)
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, errors.New("apply_patch was cancelled; nothing was changed")
	}
	var done []string
	for _, p := range plan {
		if err := t.write(root, p); err != nil {
			msg := "nothing was changed"
			if len(done) > 0 {
				msg = "already done: " + strings.Join(done, ", ")
			}
			return tools.Result{}, fmt.Errorf("apply_patch: %s: %w (%s)", p.rel, tools.ExplainPathError(p.rel, err), msg)
		}
		t.cfg.changed(ctx, call.Env, p.rel)
		if p.summary != "" { // a move's removal of the old path is told with the move
			done = append(done, p.summary)
		}
	}
	return tools.Result{Content: "applied the patch: " + strings.Join(done, ", ")}, nil
}

func (t *Patch) write(root *os.Root, p planned) error {
	if p.data == nil {
		return root.Remove(p.rel)
	}
	if dir := filepath.Dir(p.rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return atomicWrite(root, p.rel, p.data, p.perm)
}

// plan checks every operation and computes the files' new contents.
func (t *Patch) plan(root *os.Root, env tools.Env, ops []patchOp) ([]planned, error) {
	var plan []planned
	seen := map[string]bool{}
	claim := func(p string) (string, error) {
		rel, err := tools.WorkspacePath(env.Workspace, p)
		if err != nil {
			return "", err
		}
		if rel == "." {
			return "", errors.New("a path is the workspace itself; give a file name")
		}
		if seen[rel] {
			return "", fmt.Errorf("%s appears twice in the patch; put all changes to a file in one section", p)
		}
		seen[rel] = true
		return rel, nil
	}
	for _, op := range ops {
		rel, err := claim(op.path)
		if err != nil {
			return nil, err
		}
		switch op.kind {
		case opAdd:
			if err := t.checkTarget(root, rel, op.path); err != nil {
				return nil, err
			}
			plan = append(plan, planned{rel: rel, data: []byte(op.add), perm: 0o644, summary: "added " + filepath.ToSlash(rel)})
		case opDelete: // any regular file, text or not
			f, _, err := openRegular(root, rel, op.path)
			if err != nil {
				return nil, err
			}
			f.Close()
			plan = append(plan, planned{rel: rel, summary: "deleted " + filepath.ToSlash(rel)})
		case opUpdate:
			text, perm, err := t.readText(root, rel, op.path)
			if err != nil {
				return nil, err
			}
			updated, err := applyHunks(text, op.hunks)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", op.path, err)
			}
			if len(updated) > t.cfg.WriteBytes {
				return nil, fmt.Errorf("%s would be larger than %s", op.path, size(int64(t.cfg.WriteBytes)))
			}
			summary := fmt.Sprintf("updated %s (%d hunk%s)", filepath.ToSlash(rel), len(op.hunks), plural(len(op.hunks)))
			if op.moveTo == "" {
				plan = append(plan, planned{rel: rel, data: []byte(updated), perm: perm, summary: summary})
				continue
			}
			to, err := claim(op.moveTo)
			if err != nil {
				return nil, err
			}
			if err := t.checkTarget(root, to, op.moveTo); err != nil {
				return nil, err
			}
			summary = fmt.Sprintf("moved %s to %s", filepath.ToSlash(rel), filepath.ToSlash(to))
			plan = append(plan, planned{rel: to, data: []byte(updated), perm: perm, summary: summary},
				planned{rel: rel})
		}
	}
	return plan, nil
}

// readText reads an existing regular text file.
func (t *Patch) readText(root *os.Root, rel, p string) (string, os.FileMode, error) {
	f, info, err := openRegular(root, rel, p)
	if err != nil {
		return "", 0, err
	}
	data, err := readAll(f, t.cfg.WriteBytes, p)
	f.Close()
	if err != nil {
		return "", 0, err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", 0, fmt.Errorf("%s is a binary file; apply_patch only changes text", p)
	}
	return string(data), info.Mode().Perm(), nil
}

// checkTarget allows a file to be created or replaced at rel: nothing is there, or a regular
// file (the reference replaces it), and no symlink leads out of the workspace.
func (t *Patch) checkTarget(root *os.Root, rel, p string) error {
	info, err := root.Lstat(rel)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		// The parent folder must resolve inside the workspace, or not exist yet.
		for dir := filepath.Dir(rel); dir != "."; dir = filepath.Dir(dir) {
			if _, err := root.Stat(dir); err == nil {
				return nil
			} else if !errors.Is(err, iofs.ErrNotExist) {
				return tools.ExplainPathError(p, err)
			}
		}
		return nil
	case err != nil:
		return tools.ExplainPathError(p, err)
	case info.Mode()&os.ModeSymlink != 0:
		if _, err := root.Stat(rel); err != nil {
			return tools.ExplainPathError(p, err)
		}
	}
	return tools.CheckRegular(info, p)
}
