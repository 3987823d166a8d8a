package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Reach is the part of the workspace a run may name: read, ls, the message tool's media and
// a reply's MEDIA: lines all pass it (OpenFile, Reach.Shows). A run with the owner's standing
// reaches the whole workspace. Any other run (a guest's, a group's) does not reach the owner's
// private files (Private): long-term memory, USER.md, the daily notes, and the files people
// sent (inbox/) except the ones sent in its own conversation (Uploads).
type Reach struct {
	Owner bool
	// Uploads are the workspace-relative, slash-separated paths of the files people sent in
	// the run's own conversation: the only files under inbox/ a guest's run may name.
	Uploads []string
}

// Private reports whether rel (a path relative to the workspace) is one of the owner's
// private files: MEMORY.md (memory.md), USER.md, anything under memory/ (the daily notes),
// and anything under inbox/ (the files people sent). Names are compared without case, so a
// case-insensitive file system cannot open them under another spelling.
func Private(rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	first, _, _ := strings.Cut(rel, "/")
	switch strings.ToLower(first) {
	case "memory.md", "user.md", "memory", "inbox":
		return true
	}
	return false
}

// Allows reports whether the run may open rel (a clean path relative to the workspace).
func (r Reach) Allows(rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	return r.Owner || !Private(rel) || slices.Contains(r.Uploads, rel)
}

// Shows reports whether ls shows rel to the run: a path it may open, or a folder that holds
// one of its uploads (inbox/ and the day's folder, listing only those uploads).
func (r Reach) Shows(rel string) bool {
	rel = path.Clean(filepath.ToSlash(rel))
	if r.Allows(rel) {
		return true
	}
	for _, u := range r.Uploads {
		if strings.HasPrefix(u, rel+"/") {
			return true
		}
	}
	return false
}

// ErrPrivate is wrapped by the errors of a path the run's Reach does not allow.
var ErrPrivate = errors.New("the owner's private file")

// Check is the confinement check of a path the agent names: p must lie inside workspace
// (WorkspacePath) and be within reach, also after symlinks inside the workspace are
// followed, so a link cannot lead a guest to MEMORY.md. It returns p relative to workspace.
func (r Reach) Check(workspace, p string) (string, error) {
	rel, err := WorkspacePath(workspace, p)
	if err != nil {
		return "", err
	}
	if !r.Shows(rel) {
		return "", refusePrivate(p)
	}
	if r.Owner {
		return rel, nil
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("cannot open the workspace: %s", ExplainPathError(workspace, err))
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil {
		return rel, nil // missing, or a link out: os.Root says so when it opens it
	}
	if resolved, ok := inside(root, real); ok && !r.Shows(resolved) {
		return "", refusePrivate(p)
	}
	return rel, nil
}

func refusePrivate(p string) error {
	return fmt.Errorf("%w: %s is not available in this conversation (the owner's memory, notes and the files other people sent are only for the owner's own chats)", ErrPrivate, p)
}

// OpenFile opens a file the agent names, for reading or sending: the one check every such
// path passes (read, the message tool's media, a reply's MEDIA: lines). The path must pass
// Check and name a regular file with a single link (a hard link may be a copy of a file
// outside the workspace or of a private one), opened inside an os.Root so no symlink or ".."
// leads out. O_NONBLOCK keeps a FIFO from hanging the open. rel is the path relative to
// workspace.
func OpenFile(workspace string, reach Reach, p string) (f *os.File, info os.FileInfo, rel string, err error) {
	rel, err = reach.Check(workspace, p)
	if err != nil {
		return nil, nil, "", err
	}
	if !reach.Allows(rel) {
		return nil, nil, "", refusePrivate(p)
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, nil, "", fmt.Errorf("cannot open the workspace: %s", ExplainPathError(workspace, err))
	}
	defer root.Close()
	f, info, err = OpenRegular(root, rel, p)
	return f, info, rel, err
}

// OpenRegular opens rel in root for reading when it is a regular file with a single link;
// p is the path as the agent wrote it, for errors.
func OpenRegular(root *os.Root, rel, p string) (*os.File, os.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, ExplainPathError(p, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, ExplainPathError(p, err)
	}
	if err := CheckRegular(info, p); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// CheckRegular refuses directories, special files and files with more than one hard link.
func CheckRegular(info os.FileInfo, p string) error {
	switch m := info.Mode(); {
	case m.IsDir():
		return fmt.Errorf("%s is a directory; use ls to list it", p)
	case m&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink; give the path of the file it points to", p)
	case !m.IsRegular():
		return fmt.Errorf("%s is not a regular file (%s); only regular files can be used", p, FileKind(m))
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("%s has %d hard links; refusing it because a hard link can lead outside the workspace", p, st.Nlink)
	}
	return nil
}

// FileKind names a special file's type for people and models.
func FileKind(m fs.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
