// Package procmem gives memory the process no longer needs back to the operating system.
//
// ReleaseExecutable drops the pages of the running executable from the process's resident
// set and from the page cache. A Go binary is mapped from its file: starting up (package
// initialisation, opening connections) touches code and read-only data all over it, and the
// kernel maps every page of a 64 KiB window around each page touched (fault-around), so after
// start most of the file counts in the process's RSS although little of it runs again.
//
// Dropping the pages from the process alone is not enough: they stay in the page cache, and
// the next fault maps the whole cached window around its page again, so garbage collection
// and the first long polls bring most of them back. So the release also asks the kernel
// to read only the page a fault needs, not to read ahead (MADV_RANDOM), and drops the file's
// cached pages that no process maps (POSIX_FADV_DONTNEED). From then on the read-only data
// (type descriptors, the function table the collector reads to scan stacks) comes back a
// 4 KiB page at a time. Code still comes back 64 KiB at a time: the kernel reads executable
// mappings in 64 KiB folios whatever the advice. The price is paid once: the first use of a
// page after the release reads it from disk (a major fault), typically well under a
// millisecond.
//
// Only mappings that cannot hold anything the process wrote are released: mappings of the
// executable without write permission and without private (copy-on-write) pages. A writable
// mapping (.data, .bss) is never touched — MADV_DONTNEED would reset a private writable file
// mapping to the file's content — nor a read-only one holding private pages, such as a
// dynamically linked binary's relocated RELRO segment or code a debugger patched.
//
// On systems other than Linux ReleaseExecutable does nothing.
package procmem

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// Released is what ReleaseExecutable gave back.
type Released struct {
	Mappings int   // mappings of the executable released
	Bytes    int64 // resident bytes they held just before
	// Kept counts read-only mappings of the executable left alone because they hold private
	// pages (relocated or patched).
	Kept int
	// Evicted reports whether the executable's unmapped pages were also dropped from the page
	// cache. When they were not (a file system that refused), the release still holds, but
	// faults map whole cached windows again, and the gain fades as the process runs.
	Evicted bool
}

// mapping is one entry of /proc/self/smaps.
type mapping struct {
	start, end uintptr
	perms      string // "r-xp"
	inode      uint64
	path       string
	rss        int64 // bytes resident
	anon       int64 // bytes of private anonymous pages (copies made on write); -1 unknown
}

// releasable parses /proc/self/smaps and returns the mappings of the executable (path exe,
// inode ino) whose pages may be dropped, and how many read-only ones were kept because
// they hold private pages.
func releasable(smaps []byte, exe string, ino uint64) (release []mapping, kept int) {
	var all []mapping
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m, ok := parseHeader(line); ok {
			all = append(all, m)
			continue
		}
		if len(all) == 0 {
			continue
		}
		cur := &all[len(all)-1]
		switch k, v, _ := strings.Cut(line, ":"); k {
		case "Rss":
			cur.rss = kB(v)
		case "Anonymous":
			cur.anon = kB(v)
		}
	}
	for _, m := range all {
		if !ofExecutable(m, exe, ino) || !readOnly(m.perms) {
			continue
		}
		if m.anon != 0 { // private pages, or smaps did not say
			kept++
			continue
		}
		release = append(release, m)
	}
	return release, kept
}

// ofExecutable reports whether m maps the executable. A binary replaced on disk while it
// runs shows as "<path> (deleted)"; its mapping still holds the old file.
func ofExecutable(m mapping, exe string, ino uint64) bool {
	return m.inode == ino && (m.path == exe || m.path == exe+" (deleted)")
}

// readOnly reports whether perms ("r-xp") allow reading and not writing.
func readOnly(perms string) bool {
	return len(perms) == 4 && perms[0] == 'r' && perms[1] == '-'
}

// parseHeader parses a mapping's first line:
// "00400000-00c5e000 r-xp 00000000 fd:01 1234567   /usr/local/bin/reef".
// The path is the rest of the line and may contain spaces.
func parseHeader(line string) (mapping, bool) {
	m := mapping{anon: -1}
	rest := line
	var f [5]string
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			if i < 4 {
				return m, false
			}
			j = len(rest)
		}
		f[i], rest = rest[:j], rest[j:]
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return m, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	ino, err3 := strconv.ParseUint(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || end <= start || len(f[1]) != 4 || !strings.Contains(f[3], ":") {
		return m, false
	}
	m.start, m.end, m.perms, m.inode = uintptr(start), uintptr(end), f[1], ino
	m.path = strings.TrimLeft(rest, " ")
	return m, true
}

// kB parses " 1234 kB" into bytes; -1 when it is not a number.
func kB(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	if err != nil {
		return -1
	}
	return n << 10
}
