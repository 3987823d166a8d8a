package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// inotifyWatcher watches the workspace folder (for MEMORY.md, memory.md and memory/ itself)
// and every folder under memory/ with one inotify instance. Its descriptor is non-blocking
// and read only by drain, inside a sync: the kernel queues events as the writes happen, so
// a sync sees every change made before it started, with no goroutine to own.
type inotifyWatcher struct {
	fd   int
	root string           // the workspace
	dirs map[int32]string // watch descriptor → folder relative to the workspace ("" = the workspace)
	buf  []byte
}

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR

// newWatcher starts watching the memory files of the workspace ws.
func newWatcher(ws string) (watcher, error) {
	w := &inotifyWatcher{fd: -1, root: ws, buf: make([]byte, 64<<10)}
	if err := w.start(); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// start opens a new inotify instance and watches the workspace and the folders of memory/.
func (w *inotifyWatcher) start() error {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	w.fd, w.dirs = fd, map[int32]string{}
	if err := w.add(""); err != nil {
		return err
	}
	top := filepath.Join(w.root, "memory")
	if info, err := os.Lstat(top); err == nil && !info.IsDir() {
		return errors.New("inotify: memory is not a folder (a symlink?)")
	}
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == top && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // no memory/ yet: the workspace's watch sees it appear
			}
			return nil // an unreadable folder hides only itself, as in scanFiles
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(w.root, p)
		if err != nil {
			return err
		}
		return w.add(filepath.ToSlash(rel))
	})
	return err
}

func (w *inotifyWatcher) add(rel string) error {
	wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(w.root, rel), watchMask)
	if err != nil {
		return fmt.Errorf("inotify: watch %q: %w", rel, err) // ENOSPC: fs.inotify.max_user_watches reached
	}
	w.dirs[int32(wd)] = rel
	return nil
}

// drain reads the events queued since the last call. all is true when it cannot say what
// changed: the kernel's queue overflowed, or a folder under memory/ appeared, moved or went
// (the watches are then set up again, before the caller scans). An error means the watcher
// is broken.
func (w *inotifyWatcher) drain() (paths []string, all bool, err error) {
	rewatch := false
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) || n == 0 {
			break
		}
		if err != nil {
			return nil, true, fmt.Errorf("inotify: read: %w", err)
		}
		p, a, r := w.parse(w.buf[:n])
		paths, all, rewatch = append(paths, p...), all || a, rewatch || r
	}
	if rewatch {
		unix.Close(w.fd)
		w.fd = -1
		if err := w.start(); err != nil {
			return nil, true, err
		}
	}
	return paths, all || rewatch, nil
}

// parse reads inotify events: the memory files named, whether everything must be scanned
// (overflow) and whether the watches must be set up again (a folder came or went).
func (w *inotifyWatcher) parse(buf []byte) (paths []string, all, rewatch bool) {
	const head = unix.SizeofInotifyEvent
	for off := 0; off+head <= len(buf); {
		wd := int32(binary.NativeEndian.Uint32(buf[off:]))
		mask := binary.NativeEndian.Uint32(buf[off+4:])
		n := int(binary.NativeEndian.Uint32(buf[off+12:]))
		name := buf[off+head : min(len(buf), off+head+n)]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		off += head + n
		dir, known := w.dirs[wd]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			all = true
		case !known:
		case mask&unix.IN_IGNORED != 0:
			delete(w.dirs, wd)
		case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
			rewatch = true // a watched folder went; the workspace itself, even
		case mask&unix.IN_ISDIR != 0:
			if rel := path.Join(dir, string(name)); rel == "memory" || dir != "" {
				rewatch = true
			}
		case len(name) > 0:
			if rel := path.Join(dir, string(name)); IsMemoryPath(rel) {
				paths = append(paths, rel)
			}
		}
	}
	return paths, all, rewatch
}

func (w *inotifyWatcher) close() error {
	if w.fd < 0 {
		return nil
	}
	err := unix.Close(w.fd)
	w.fd = -1
	return err
}
