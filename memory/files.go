package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"unicode/utf8"
)

// IsMemoryPath reports whether rel (slash-separated, relative to the workspace) is a memory
// file: MEMORY.md, memory.md, or a .md file under memory/.
func IsMemoryPath(rel string) bool {
	rel = path.Clean(strings.ReplaceAll(rel, "\\", "/"))
	if rel == "MEMORY.md" || rel == "memory.md" {
		return true
	}
	return strings.HasPrefix(rel, "memory/") && strings.HasSuffix(strings.ToLower(rel), ".md")
}

// statFile is one memory file found by a scan.
type statFile struct {
	path  string // slash-separated, relative to the workspace
	size  int64
	mtime int64
}

// scanFiles lists the memory files of the workspace: regular files only (symlinks, FIFOs and
// devices are skipped, so a scan can neither leave the workspace nor hang).
func scanFiles(root *os.Root) ([]statFile, error) {
	var out []statFile
	add := func(p string, info fs.FileInfo) {
		if info.Mode().IsRegular() {
			out = append(out, statFile{path: p, size: info.Size(), mtime: info.ModTime().UnixNano()})
		}
	}
	for _, top := range []string{"MEMORY.md", "memory.md"} {
		if info, err := root.Lstat(top); err == nil {
			add(top, info)
		}
	}
	err := fs.WalkDir(root.FS(), "memory", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == "memory" {
				return fs.SkipAll
			}
			return nil // an unreadable directory hides only itself
		}
		if d.IsDir() || !IsMemoryPath(p) || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			add(p, info)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory: scan: %w", err)
	}
	return out, nil
}

// readNote reads a memory file of at most max bytes. It reports why a file is skipped
// instead (too large, binary); invalid UTF-8 is replaced, not refused.
func readNote(root *os.Root, p string, max int64) (text, skipped string, err error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", "", err
	}
	if !info.Mode().IsRegular() {
		return "", "not a regular file", nil
	}
	if info.Size() > max {
		return "", fmt.Sprintf("larger than %d bytes", max), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return "", "", err
	}
	if int64(len(data)) > max {
		return "", fmt.Sprintf("larger than %d bytes", max), nil
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return "", "binary (NUL bytes)", nil
	}
	if !utf8.Valid(data) {
		return strings.ToValidUTF8(string(data), "\uFFFD"), "", nil
	}
	return string(data), "", nil
}
