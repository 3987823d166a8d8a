package procmem

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
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
