package memory

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"time"
)

// watcher tells a sync which memory files may have changed since it last asked, so a sync
// does not stat every note (inotify on Linux: watch_linux.go).
type watcher interface {
	// drain returns the workspace-relative paths of memory files with events since the last
	// call; all is true when the watcher cannot say (its queue overflowed, a folder came or
	// went): scan everything. An error means the watcher is broken and must be dropped.
	drain() (paths []string, all bool, err error)
	close() error
}

// safetyScanEvery: even with a watcher, a sync scans every file this often, in case the
// watcher missed something (a network file system, a change it cannot see).
const safetyScanEvery = 5 * time.Minute

// filesToCheck decides what a sync looks at: every memory file (full: a stat scan) or the
// files the watcher saw change and those the tools touched. Without a working watcher it
// scans at most every cfg.ScanEvery, else only touched files. x.mu is held.
func (x *Index) filesToCheck(root *os.Root) (found []statFile, gone []string, full bool, err error) {
	now := x.clock()
	if x.watch == nil && x.watchErr == nil && !x.cfg.NoWatch && !x.cfg.Shared {
		if x.watch, x.watchErr = newWatcher(x.cfg.Workspace); x.watchErr != nil {
			x.log.Info().Err(x.watchErr).Str("agent", x.cfg.AgentID).Str("every", x.cfg.ScanEvery.Round(time.Millisecond).String()).
				Msg("memory: no file watcher; notes changed outside reef are found by a periodic scan")
		}
	}
	full = x.scanned.IsZero()
	if x.watch != nil {
		paths, all, err := x.watch.drain()
		if err != nil {
			x.dropWatcher(err)
			full = true
		}
		for _, p := range paths {
			x.pending[p] = true
		}
		full = full || all || now.Sub(x.scanned) >= safetyScanEvery
	} else {
		full = full || x.cfg.Shared || now.Sub(x.scanned) >= x.cfg.ScanEvery
	}
	if full {
		found, err = scanFiles(root)
		if err != nil {
			return nil, nil, false, err
		}
		x.scanned = now
		x.stats.Scans++
		clear(x.pending)
		return found, nil, true, nil
	}
	for p := range x.force {
		x.pending[p] = true
	}
	for _, p := range slices.Sorted(maps.Keys(x.pending)) {
		info, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) || err == nil && !info.Mode().IsRegular():
			gone = append(gone, p)
		case err != nil:
			continue // kept pending: tried again at the next sync
		default:
			found = append(found, statFile{path: p, size: info.Size(), mtime: info.ModTime().UnixNano()})
			x.force[p] = true // an event is proof enough: read it even if size and mtime kept still
		}
		delete(x.pending, p)
	}
	return found, gone, false, nil
}

// dropWatcher stops using a broken watcher: syncs fall back to the periodic scan.
func (x *Index) dropWatcher(err error) {
	x.watch.close()
	x.watch, x.watchErr = nil, err
	x.log.Warn().Err(err).Str("agent", x.cfg.AgentID).Msg("memory: file watcher failed; scanning the notes periodically instead")
}

// Close releases the index's file watcher. The index still works after Close, scanning.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.watch == nil {
		return nil
	}
	err := x.watch.close()
	x.watch, x.watchErr = nil, errors.New("closed")
	return err
}
