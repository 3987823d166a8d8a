package procmem

import (
	"fmt"
	"os"
	"syscall"
)

// ReleaseExecutable drops the executable's clean, read-only pages from the resident set of
// this process (see the package comment). Code and data still in use fault back in from
// the page cache. It is meant to run once, after start-up has settled.
func ReleaseExecutable() (Released, error) {
	var r Released
	exe, err := os.Executable()
	if err != nil {
		return r, fmt.Errorf("procmem: executable: %w", err)
	}
	// Stat follows /proc/self/exe to the file mapped, even when its path was deleted or replaced.
	fi, err := os.Stat("/proc/self/exe")
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
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno != 0 {
			return r, fmt.Errorf("procmem: madvise %x-%x %s: %w", m.start, m.end, m.perms, errno)
		}
		r.Mappings++
		r.Bytes += max(m.rss, 0)
	}
	return r, nil
}
