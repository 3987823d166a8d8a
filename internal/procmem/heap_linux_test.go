package procmem

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestMain runs the heap reserve's check in a process of its own when asked: ReserveHeap
// works only before the first garbage collection, which a test binary is past by the time
// its tests run.
func TestMain(m *testing.M) {
	if os.Getenv("PROCMEM_RESERVE_CHECK") == "1" {
		out, err := reserveCheck()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(out)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// reserveResult is what reserveCheck saw.
type reserveResult struct {
	Size       int64
	RSSGrowth  int64  // resident bytes the reservation itself added
	FlagsHuge  string // VmFlags of the reserve's mapping after SetHuge(true)
	FlagsNo    string // after SetHuge(false)
	InReserve  int    // of the blocks allocated after it, how many landed in the reserve
	Allocated  int
	LaterEmpty bool // a second ReserveHeap, after garbage collections, reserves nothing
	// PausedUntilCollect: no collection ran between ReserveHeap and Collect.
	PausedUntilCollect bool
	// HugeLater is how much of the reserve was in huge pages after the process had run a while
	// (allocated, freed, collected), then armed and allocated 32 MB more.
	HugeLater int64
}

func reserveCheck() (reserveResult, error) {
	var r reserveResult
	rss := func() int64 {
		b, _ := os.ReadFile("/proc/self/statm")
		f := strings.Fields(string(b))
		n, _ := strconv.ParseInt(f[1], 10, 64)
		return n * int64(os.Getpagesize())
	}
	before := rss()
	h := reserveHeap(64 << 20) // ReserveHeap makes none under the race detector
	h.SetHuge(true)            // applies once it is ready
	paused := gcCycles() == 0
	var keepUp [][]byte
	for range 64 { // start-up: with the collector paused, nothing is collected
		keepUp = append(keepUp, make([]byte, 64<<10))
	}
	r.PausedUntilCollect = paused && gcCycles() == 0
	h.Collect()
	size, err := h.Wait()
	if err != nil || size == 0 {
		return r, fmt.Errorf("ReserveHeap: %d bytes, %v", size, err)
	}
	r.Size, r.RSSGrowth = size, rss()-before
	if r.FlagsHuge, err = vmFlags(h.start); err != nil {
		return r, err
	}
	h.SetHuge(false)
	if r.FlagsNo, err = vmFlags(h.start); err != nil {
		return r, err
	}
	var keep [][]byte
	for range 256 {
		b := make([]byte, 64<<10)
		b[0] = 1
		keep = append(keep, b)
		if p := uintptr(unsafe.Pointer(&b[0])); p >= h.start && p < h.end {
			r.InReserve++
		}
	}
	r.Allocated = len(keep)
	runtime.KeepAlive(keepUp)

	// Later: churn, then a burst, armed.
	for range 4 {
		var churn [][]byte
		for range 256 {
			churn = append(churn, make([]byte, 64<<10))
		}
		runtime.KeepAlive(churn)
		runtime.GC()
	}
	h.SetHuge(true)
	var burst [][]byte
	for range 32 {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		burst = append(burst, b)
	}
	if r.HugeLater, err = anonHuge(h.start, h.end); err != nil {
		return r, err
	}
	runtime.KeepAlive(burst)
	later := reserveHeap(64 << 20)
	later.Collect()
	again, err := later.Wait()
	r.LaterEmpty = again == 0 && err != nil
	return r, nil
}

// anonHuge sums AnonHugePages of the mappings of /proc/self/smaps within [start, end).
func anonHuge(start, end uintptr) (int64, error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	var total int64
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := parseHeader(line); ok {
			in = m.start < end && m.end > start
			continue
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok && in {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			total += kb << 10
		}
	}
	return total, nil
}

// vmFlags returns the VmFlags line of the mapping of /proc/self/smaps that holds addr.
func vmFlags(addr uintptr) (string, error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := parseHeader(line); ok {
			in = addr >= m.start && addr < m.end
			continue
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no mapping holds %x", addr)
}

// TestReserveHeap: the reserve costs no memory, the heap grows into it, and huge pages are
// asked for there and forbidden again (the flags the kernel keeps on the mapping: hg, nh).
func TestReserveHeap(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCMEM_RESERVE_CHECK=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check process: %v\n%s", err, out)
	}
	var r reserveResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("%+v", r)
	if r.Size < 60<<20 {
		t.Errorf("reserved %d bytes, want about 64 MiB", r.Size)
	}
	if r.RSSGrowth > 8<<20 && !raceEnabled { // the race detector's shadow memory is resident
		t.Errorf("reserving made %d bytes resident: the reserve was touched", r.RSSGrowth)
	}
	if !hasFlag(r.FlagsHuge, "hg") || hasFlag(r.FlagsHuge, "nh") {
		t.Errorf("after SetHuge(true) VmFlags %q, want hg", r.FlagsHuge)
	}
	if !hasFlag(r.FlagsNo, "nh") || hasFlag(r.FlagsNo, "hg") {
		t.Errorf("after SetHuge(false) VmFlags %q, want nh", r.FlagsNo)
	}
	if r.InReserve < r.Allocated/2 {
		t.Errorf("%d of %d blocks allocated after the reserve landed in it", r.InReserve, r.Allocated)
	}
	if thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); strings.Contains(string(thp), "[never]") || len(thp) == 0 {
		t.Logf("transparent huge pages unavailable: not checked that the armed reserve gets them")
	} else if r.HugeLater < 2<<20 {
		t.Errorf("armed after the process ran a while, the reserve held %d bytes in huge pages", r.HugeLater)
	}
	if !r.PausedUntilCollect {
		t.Error("a collection ran before Collect")
	}
	if !r.LaterEmpty {
		t.Error("a reserve was made after garbage collections (its allocation may be cleared, touching every page)")
	}
}

func hasFlag(flags, f string) bool {
	for _, x := range strings.Fields(flags) {
		if x == f {
			return true
		}
	}
	return false
}
