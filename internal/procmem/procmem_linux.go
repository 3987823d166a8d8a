package procmem

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReleaseExecutable drops the executable's clean, read-only pages from the resident set of
// this process and from the page cache (see the package comment). Code and data still in
// use fault back in. It is meant to run once, after start-up has settled.
func ReleaseExecutable() (Released, error) {
	var r Released
	exe, err := os.Executable()
	if err != nil {
		return r, fmt.Errorf("procmem: executable: %w", err)
	}
	// /proc/self/exe opens the file mapped, even when its path was deleted or replaced.
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return r, fmt.Errorf("procmem: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return r, fmt.Errorf("procmem: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return r, fmt.Errorf("procmem: no inode for %s", exe)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return r, fmt.Errorf("procmem: %w", err)
	}
	release, kept := releasable(smaps, exe, st.Ino)
	r.Kept = kept
	for _, m := range release {
		// MADV_RANDOM first: from now on a fault reads the page it needs, not a window of
		// read-ahead around it.
		for _, advice := range []int{unix.MADV_RANDOM, unix.MADV_DONTNEED} {
			if err := madvise(m.start, m.end, advice); err != nil {
				return r, fmt.Errorf("%w (%s)", err, m.perms)
			}
		}
		r.Mappings++
		r.Bytes += max(m.rss, 0)
	}
	if r.Mappings == 0 {
		return r, nil
	}
	r.Evicted = evict(f) == nil
	return r, nil
}

// evict drops the cached pages of the executable f that no process maps, so that a later
// fault around a page finds nothing cached to map with it. Dirty pages cannot be dropped: a
// binary written moments ago (go run, a fresh build) is written out first; an installed
// binary has nothing to write. It fails on a file system that cannot sync (a read-only mount
// may refuse). On tmpfs it succeeds and drops nothing: there the cached pages are the file.
func evict(f *os.File) error {
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
