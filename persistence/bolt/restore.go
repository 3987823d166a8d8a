package bolt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Restore puts the database copy at src in place of the database at path. It first checks
// the copy (Open read-only, which finds a damaged file, then Check); then, holding the lock
// of the file at path, so it fails with persistence.ErrLocked while reef runs, it renames
// that file to <path>.before-restore-<time> (kept, untouched; "" when there was none) and src
// to path. src must be on path's filesystem (beside it); on an error both files are where
// they were.
func Restore(path, src string, now time.Time) (kept string, err error) {
	cp, err := Open(src, Options{ReadOnly: true})
	if err != nil {
		return "", fmt.Errorf("bolt: restore: the copy does not open: %w", err)
	}
	err = cp.Check()
	cp.Close()
	if err != nil {
		return "", fmt.Errorf("bolt: restore: the copy fails its check: %w", err)
	}

	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f = nil
	case err != nil:
		return "", fmt.Errorf("bolt: restore %s: %w", path, err)
	default:
		defer f.Close() // releases the lock
		if err := lockFile(f, true, 0); err != nil {
			return "", fmt.Errorf("bolt: restore %s: %w", path, err)
		}
		kept = path + ".before-restore-" + now.UTC().Format("20060102-150405")
		if err := os.Rename(path, kept); err != nil {
			return "", fmt.Errorf("bolt: restore %s: %w", path, err)
		}
	}
	if err := os.Rename(src, path); err != nil {
		if kept != "" {
			_ = os.Rename(kept, path) // put the old file back
		}
		return "", fmt.Errorf("bolt: restore %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil { // make the renames durable
		_ = d.Sync()
		d.Close()
	}
	return kept, nil
}
