package procmem

import (
	"fmt"
	"strings"
	"testing"
)

const testExe = "/usr/local/bin/reef"

// smapsEntry renders one mapping as /proc/self/smaps shows it; anon < 0 leaves out the
// Anonymous line.
func smapsEntry(start, end uint64, perms string, ino uint64, path string, rssKB, anonKB int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%08x-%08x %s 00000000 fd:01 %d", start, end, perms, ino)
	if path != "" {
		fmt.Fprintf(&b, "                    %s", path)
	}
	fmt.Fprintf(&b, "\nSize:               %d kB\nKernelPageSize:        4 kB\nRss:                %d kB\nPss:                %d kB\n", (end-start)>>10, rssKB, rssKB)
	if anonKB >= 0 {
		fmt.Fprintf(&b, "Anonymous:          %d kB\n", anonKB)
	}
	b.WriteString("LazyFree:              0 kB\nTHPeligible:    0\nVmFlags: rd ex mr mw me dw sd\n")
	return b.String()
}

// TestReleasableOnlyCleanReadOnlyMappingsOfTheExecutable: of every kind of mapping a process
// has, only the executable's read-only mappings without private pages are released; a
// writable mapping never is, whatever else it looks like.
func TestReleasableOnlyCleanReadOnlyMappingsOfTheExecutable(t *testing.T) {
	const ino = 1234567
	for _, tc := range []struct {
		name  string
		entry string
		want  bool
		kept  bool
	}{
		{"text", smapsEntry(0x400000, 0xc5e000, "r-xp", ino, testExe, 9000, 0), true, false},
		{"rodata", smapsEntry(0xc5e000, 0x1200000, "r--p", ino, testExe, 5000, 0), true, false},
		{"data, written", smapsEntry(0x1200000, 0x1240000, "rw-p", ino, testExe, 256, 200), false, false},
		{"data, not written yet", smapsEntry(0x1200000, 0x1240000, "rw-p", ino, testExe, 256, 0), false, false},
		{"shared writable", smapsEntry(0x1200000, 0x1240000, "rw-s", ino, testExe, 256, 0), false, false},
		{"write-only", smapsEntry(0x1200000, 0x1240000, "-w-p", ino, testExe, 0, 0), false, false},
		{"relocated RELRO", smapsEntry(0x1240000, 0x1250000, "r--p", ino, testExe, 64, 8), false, true},
		{"no Anonymous line", smapsEntry(0x1240000, 0x1250000, "r--p", ino, testExe, 64, -1), false, true},
		{"no access (guard)", smapsEntry(0x1250000, 0x1260000, "---p", ino, testExe, 0, 0), false, false},
		{"replaced on disk", smapsEntry(0x400000, 0xc5e000, "r-xp", ino, testExe+" (deleted)", 9000, 0), true, false},
		{"another file", smapsEntry(0x7f0000000000, 0x7f0000100000, "r-xp", 42, "/usr/lib/libc.so.6", 900, 0), false, false},
		{"same path, other inode", smapsEntry(0x400000, 0xc5e000, "r-xp", ino+1, testExe, 9000, 0), false, false},
		{"same inode, other path", smapsEntry(0x400000, 0xc5e000, "r-xp", ino, "/tmp/reef", 9000, 0), false, false},
		{"prefix of the path", smapsEntry(0x400000, 0xc5e000, "r-xp", ino, testExe+".old", 9000, 0), false, false},
		{"heap", smapsEntry(0xc000000000, 0xc004000000, "rw-p", 0, "", 2048, 2048), false, false},
		{"stack", smapsEntry(0x7ffd0000, 0x7ffd2000, "rw-p", 0, "[stack]", 8, 8), false, false},
		{"vdso", smapsEntry(0x7ffe0000, 0x7ffe2000, "r-xp", 0, "[vdso]", 8, 0), false, false},
	} {
		got, kept := releasable([]byte(tc.entry), testExe, ino)
		if (len(got) == 1) != tc.want || len(got) > 1 {
			t.Errorf("%s: released %v, want release=%v\n%s", tc.name, got, tc.want, tc.entry)
		}
		if (kept == 1) != tc.kept {
			t.Errorf("%s: kept %d, want kept=%v", tc.name, kept, tc.kept)
		}
	}
}

// TestReleasableReadsWholeSmaps: a full listing yields the right mappings with their
// addresses and resident sizes, and a path with spaces is matched whole.
func TestReleasableReadsWholeSmaps(t *testing.T) {
	const ino = 77
	exe := "/opt/my apps/reef"
	smaps := smapsEntry(0x400000, 0x800000, "r-xp", ino, exe, 3000, 0) +
		smapsEntry(0x800000, 0x900000, "r--p", ino, exe, 700, 0) +
		smapsEntry(0x900000, 0x910000, "rw-p", ino, exe, 64, 40) +
		smapsEntry(0x910000, 0x990000, "rw-p", 0, "", 100, 100) +
		smapsEntry(0x7f0000000000, 0x7f0000001000, "r-xp", 9, "/opt/my apps/reef2", 4, 0)
	got, kept := releasable([]byte(smaps), exe, ino)
	if kept != 0 || len(got) != 2 {
		t.Fatalf("released %+v, kept %d; want the two read-only mappings of %q", got, kept, exe)
	}
	want := []mapping{
		{start: 0x400000, end: 0x800000, perms: "r-xp", inode: ino, path: exe, rss: 3000 << 10, anon: 0},
		{start: 0x800000, end: 0x900000, perms: "r--p", inode: ino, path: exe, rss: 700 << 10, anon: 0},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
		path string
	}{
		{"00400000-00c5e000 r-xp 00000000 fd:01 1234567                            /usr/local/bin/reef", true, "/usr/local/bin/reef"},
		{"7ffd4a3e1000-7ffd4a402000 rw-p 00000000 00:00 0                          [stack]", true, "[stack]"},
		{"c000000000-c000400000 rw-p 00000000 00:00 0 ", true, ""},
		{"c000000000-c000400000 rw-p 00000000 00:00 0", true, ""},
		{"Rss:                  12 kB", false, ""},
		{"VmFlags: rd ex mr mw me dw sd", false, ""},
		{"THPeligible:    0", false, ""},
		{"00400000-00300000 r-xp 00000000 fd:01 1 /x", false, ""}, // end before start
		{"", false, ""},
	} {
		m, ok := parseHeader(tc.line)
		if ok != tc.ok || (ok && m.path != tc.path) {
			t.Errorf("parseHeader(%q) = %+v, %v; want ok=%v path %q", tc.line, m, ok, tc.ok, tc.path)
		}
	}
}
