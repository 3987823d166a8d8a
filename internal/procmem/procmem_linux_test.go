package procmem

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// written lives in the executable's writable data (an initialised package variable): a
// release that touched a writable mapping would reset it to the file's content.
var written = [4]int64{1, 2, 3, 4}

// status reads a kB field of /proc/self/status.
func status(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// work runs a good deal of library code (JSON, regexps, sorting) and checks its results.
func work(t *testing.T) {
	t.Helper()
	type doc struct {
		Name  string
		Items []int
	}
	in := doc{"reef", []int{5, 3, 9, 1}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil || out.Name != "reef" || !slices.Equal(out.Items, in.Items) {
		t.Fatalf("json round trip: %+v, %v", out, err)
	}
	slices.Sort(out.Items)
	if !slices.Equal(out.Items, []int{1, 3, 5, 9}) {
		t.Fatalf("sorted: %v", out.Items)
	}
	if got := regexp.MustCompile(`[a-z]+-[0-9]+`).FindAllString("bm-1-2 x-9 y", -1); !slices.Equal(got, []string{"bm-1", "x-9"}) {
		t.Fatalf("regexp: %v", got)
	}
}

// TestReleaseExecutable: the release takes the executable's pages out of the resident set,
// the program goes on running (its code faults back in), and what it wrote to its data stays.
func TestReleaseExecutable(t *testing.T) {
	work(t)
	written[2] = 42
	before := status(t, "RssFile")
	r, err := ReleaseExecutable()
	after := status(t, "RssFile")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("released %d mappings, %d kB (kept %d); RssFile %d kB → %d kB", r.Mappings, r.Bytes>>10, r.Kept, before>>10, after>>10)
	if r.Mappings == 0 || r.Bytes < 256<<10 {
		t.Fatalf("released %+v: want the executable's text and read-only data", r)
	}
	// The few pages this test touches between the release and the read fault back in.
	if before-after < r.Bytes/4 {
		t.Errorf("RssFile went from %d kB to %d kB, want it lower by about the %d kB released", before>>10, after>>10, r.Bytes>>10)
	}
	if written != [4]int64{1, 2, 42, 4} {
		t.Errorf("package data after the release = %v, want {1 2 42 4}: a writable mapping was reset", written)
	}
	work(t)
	if _, err := ReleaseExecutable(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	work(t)
}

// TestReleaseDropsCachedPages: after the release, the executable's pages that no process
// maps are out of the page cache, so a fault finds no cached window around its page to map
// with it.
func TestReleaseDropsCachedPages(t *testing.T) {
	var fs unix.Statfs_t
	if err := unix.Statfs("/proc/self/exe", &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC || fs.Type == unix.RAMFS_MAGIC {
		t.Skip("the test binary is on tmpfs, whose pages are the file and cannot be dropped")
	}
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	cached := func() int {
		t.Helper()
		vec := make([]byte, (len(m)+page-1)/page)
		_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
		if errno != 0 {
			t.Fatal(errno)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n * page / 1024
	}
	// What runs stays cached whatever is done: the kernel keeps a cached folio (up to several
	// pages) while any of its pages is mapped. A first release leaves that.
	if _, err := ReleaseExecutable(); err != nil {
		t.Fatal(err)
	}
	inUse := cached()
	// Cache the rest of the file, a page at a time, and release again.
	if err := unix.Madvise(m, unix.MADV_RANDOM); err != nil {
		t.Fatal(err)
	}
	var sum byte
	for i := 0; i < len(m); i += page {
		sum += m[i]
	}
	before := cached()
	r, err := ReleaseExecutable()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Evicted {
		t.Fatal("the release did not drop the executable's cached pages")
	}
	after := cached()
	t.Logf("executable %d kB: %d kB cached after a release, %d kB with every page read, %d kB after another release (%d)",
		len(m)>>10, inUse, before, after, sum)
	if before-inUse < len(m)>>10/8 {
		t.Fatalf("the release left %d kB of the %d kB executable cached: want the pages that run, a fraction", inUse, len(m)>>10)
	}
	if after-inUse > (before-inUse)/4 {
		t.Errorf("%d kB more than after the first release still cached after the second; %d kB were: want what the test touched since, a fraction",
			after-inUse, before-inUse)
	}
	work(t)
}
