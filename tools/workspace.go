package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrEscapes is wrapped by the errors of WorkspacePath and ExplainPathError when a path leads
// out of the workspace.
var ErrEscapes = errors.New("path escapes the workspace")

// WorkspacePath turns a path given by the model into a clean path relative to workspace, ready
// for an os.Root opened on it ("." is the workspace itself). Relative paths are taken as they
// are, absolute paths only when they lie inside the workspace; "~" and lexical escapes ("../")
// are refused. Symlinks are not looked at here: os.Root refuses those that lead out.
func WorkspacePath(workspace, p string) (string, error) {
	if workspace == "" {
		return "", errors.New("no workspace is configured for this agent")
	}
	if p == "" {
		return "", errors.New("path is empty; give a path relative to the workspace")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("%w: %s (~ is not expanded); give a path relative to the workspace", ErrEscapes, p)
	}
	if filepath.IsAbs(p) {
		if rel, ok := inside(workspace, p); ok {
			return rel, nil
		}
		if real, err := filepath.EvalSymlinks(workspace); err == nil {
			if rel, ok := inside(real, p); ok {
				return rel, nil
			}
		}
		return "", fmt.Errorf("%w: %s is outside it; give a path relative to the workspace", ErrEscapes, p)
	}
	rel := filepath.Clean(p)
	if escapes(rel) {
		return "", fmt.Errorf("%w: %s", ErrEscapes, p)
	}
	return rel, nil
}

// inside reports whether the absolute path p lies in dir, and p relative to dir.
func inside(dir, p string) (string, bool) {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	if err != nil || escapes(rel) {
		return "", false
	}
	return rel, true
}

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel)
}

// ExplainPathError turns an error from an os.Root operation on p into a short message for
// the model, without the operating system's jargon.
func ExplainPathError(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrEscapes):
		return err
	// os.Root reports escapes with an unexported error; its text is the only handle.
	case strings.Contains(err.Error(), "path escapes from parent"):
		return fmt.Errorf("%w: %s (a symlink or .. leads out, and absolute symlinks are never followed); give a path inside the workspace", ErrEscapes, p)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no such file or directory: %s", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied: %s", p)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("a parent of %s is not a directory", p)
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("too many symlinks in %s", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s", p, pe.Err.Error())
	}
	return fmt.Errorf("%s: %s", p, err.Error())
}
