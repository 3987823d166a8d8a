// Package fs provides the file tools: read, write, edit, ls and apply_patch. Each call opens the agent's
// workspace as an os.Root, so no path, symlink or ".." can lead out of it; hardlinked files,
// FIFOs and devices are refused so a call can neither escape nor hang.
package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reefgw/reef/tools"
)

// Config bounds the file tools. Zero fields take the defaults shown.
type Config struct {
	ReadLines   int // lines returned by one read, default 2000
	LineChars   int // characters kept of one line, default 2000
	ReadBytes   int // bytes returned by one read, default 50 KB
	WriteBytes  int // largest file write and edit produce, default 10 MB
	ListEntries int // entries shown by one ls, default 500
	// Changed, when set, is called after write, edit or apply_patch changed a file, with the path
	// relative to the workspace (slash-separated): the memory index re-reads it at once.
	Changed func(ctx context.Context, env tools.Env, rel string)
	// ReadOnlyDirs are absolute folders outside the workspace that read and ls may also open,
	// by absolute path: the shared and the bundled skills. Nothing writes there.
	ReadOnlyDirs []string
}

// changed reports a written file to cfg.Changed.
func (c Config) changed(ctx context.Context, env tools.Env, rel string) {
	if c.Changed != nil {
		c.Changed(ctx, env, filepath.ToSlash(rel))
	}
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.ReadLines, 2000)
	def(&c.LineChars, 2000)
	def(&c.ReadBytes, 50<<10)
	def(&c.WriteBytes, 10<<20)
	def(&c.ListEntries, 500)
	return c
}

// Tools returns read, write, edit, ls and apply_patch.
func Tools(cfg Config) []tools.Tool {
	return []tools.Tool{NewRead(cfg), NewWrite(cfg), NewEdit(cfg), NewList(cfg), NewPatch(cfg)}
}

// pathArgs is the path argument every file tool takes, under its name or its alias.
type pathArgs struct {
	Path     string `json:"path"`
	FilePath string `json:"file_path"`
}

// get returns the path, or def when the model gave none and def is not empty.
func (a pathArgs) get(def string) (string, error) {
	switch {
	case a.Path != "" && a.FilePath != "" && a.Path != a.FilePath:
		return "", errors.New("give path or file_path, not both")
	case a.Path != "":
		return a.Path, nil
	case a.FilePath != "":
		return a.FilePath, nil
	case def != "":
		return def, nil
	}
	return "", errors.New("path is required")
}

// openWorkspace opens the workspace as a root and resolves p inside it.
func openWorkspace(env tools.Env, p string) (root *os.Root, rel string, err error) {
	rel, err = tools.WorkspacePath(env.Workspace, p)
	if err != nil {
		return nil, "", err
	}
	root, err = os.OpenRoot(env.Workspace)
	if err != nil {
		return nil, "", fmt.Errorf("cannot open the workspace: %s", tools.ExplainPathError(env.Workspace, err))
	}
	return root, rel, nil
}

// openForRead opens the workspace for the tools that only read, with p checked against the
// run's reach (tools.Reach): a file p must be one the run may open, a folder one it may list.
// An absolute path outside the workspace but inside one of c.ReadOnlyDirs opens that folder
// instead, confined the same way.
func (c Config) openForRead(env tools.Env, p string, file bool) (*os.Root, string, error) {
	rel, err := env.Reach.Check(env.Workspace, p)
	if err == nil && file && !env.Reach.Allows(rel) {
		err = fmt.Errorf("%w: %s is not available in this conversation", tools.ErrPrivate, p)
	}
	if err == nil {
		root, oerr := os.OpenRoot(env.Workspace)
		if oerr != nil {
			return nil, "", fmt.Errorf("cannot open the workspace: %s", tools.ExplainPathError(env.Workspace, oerr))
		}
		return root, rel, nil
	}
	if !errors.Is(err, tools.ErrEscapes) || !filepath.IsAbs(p) {
		return nil, "", err
	}
	for _, dir := range c.ReadOnlyDirs {
		r, rerr := tools.WorkspacePath(dir, p)
		if rerr != nil {
			continue
		}
		root, oerr := os.OpenRoot(dir)
		if oerr != nil {
			return nil, "", tools.ExplainPathError(p, oerr)
		}
		return root, r, nil
	}
	return nil, "", err
}

// openRegular opens a regular file with a single link for reading (tools.OpenRegular).
func openRegular(root *os.Root, rel, p string) (*os.File, os.FileInfo, error) {
	return tools.OpenRegular(root, rel, p)
}

// readAll reads at most max bytes of f, failing when there are more.
func readAll(f *os.File, max int, p string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, tools.ExplainPathError(p, err)
	}
	if len(data) > max {
		return nil, fmt.Errorf("%s is larger than %s; it is too big for this tool", p, size(int64(max)))
	}
	return data, nil
}

// size renders a byte count for people and models.
func size(n int64) string {
	switch {
	case n >= 10<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 10<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// schema renders a JSON Schema object; it panics on a programming error in a literal.
func schema(v map[string]any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// pathProps are the schema properties of pathArgs.
func pathProps(desc string) map[string]any {
	return map[string]any{
		"path":      map[string]any{"type": "string", "description": desc},
		"file_path": map[string]any{"type": "string", "description": "Same as path; give one of the two."},
	}
}
