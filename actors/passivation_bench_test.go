package actors_test

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/reefgw/reef/persistence/bolt"
)

// BenchmarkPassivation100k touches 100,000 distinct conversations once each (one message,
// answered) through the whole tree on a durable bolt store, then lets them all passivate. It
// reports the Go heap and the process's RSS with every Session live and after passivation
// (each after a collection that returns freed memory to the OS). Run it with -benchtime 1x.
func BenchmarkPassivation100k(b *testing.B) {
	chats := 100_000
	if n, err := strconv.Atoi(os.Getenv("REEF_BENCH_CHATS")); err == nil { // quicker looks
		chats = n
	}
	for range b.N {
		store, err := bolt.Open(filepath.Join(b.TempDir(), "reef.db"), bolt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		r := newPassRig(b, store)
		r.mu.Lock()
		r.replies = nil // the rig's own bookkeeping must not count as the gateway's memory
		r.mu.Unlock()
		r.touch(0, 1, 1) // warm up: first-use allocations are not per-session costs
		base := measure()
		procs := r.rt.Processes() - 1 // without the warm-up's Session

		r.touch(1, chats, 256)
		active := measure()
		writeHeapProfile(os.Getenv("REEF_HEAP_PROFILE"), "active")
		if live := r.rt.LiveSessions(); live != chats+1 {
			b.Fatalf("%d live sessions, want %d", live, chats+1)
		}
		activeProcs := r.rt.Processes()

		r.passivateAll()
		passive := measure()
		writeHeapProfile(os.Getenv("REEF_HEAP_PROFILE"), "passive")
		if p := r.rt.Processes(); p != procs {
			b.Fatalf("%d processes after passivation, want %d", p, procs)
		}
		b.ReportMetric(float64(activeProcs-procs), "session-actors-active")
		b.ReportMetric(mb(active.heap), "MB-heap-active")
		b.ReportMetric(mb(active.rss), "MB-rss-active")
		b.ReportMetric(mb(active.anon), "MB-anon-active")
		b.ReportMetric(mb(passive.heap), "MB-heap-passive")
		b.ReportMetric(mb(passive.rss), "MB-rss-passive")
		b.ReportMetric(mb(passive.anon), "MB-anon-passive")
		b.ReportMetric(mb(base.heap), "MB-heap-base")
		b.ReportMetric(float64(active.heap-base.heap)/float64(chats), "B/session-active")
		b.ReportMetric(float64(int64(passive.heap)-int64(base.heap))/float64(chats), "B/session-passive")
		var dbSize int64
		if fi, err := os.Stat(store.Path()); err == nil {
			dbSize = fi.Size()
		}
		b.ReportMetric(mb(uint64(dbSize)), "MB-db-file")
		for _, m := range []memSample{active, passive} {
			b.Logf("heapInuse %.1f heapIdle %.1f released %.1f stack %.1f mspan %.1f gcSys %.1f other %.1f sys %.1f",
				mb(m.ms.HeapInuse), mb(m.ms.HeapIdle), mb(m.ms.HeapReleased), mb(m.ms.StackInuse), mb(m.ms.MSpanInuse), mb(m.ms.GCSys), mb(m.ms.OtherSys), mb(m.ms.Sys))
		}
		r.stop()
	}
}

// writeHeapProfile writes a heap profile to <prefix>.<stage>.pb.gz when prefix is set: what
// the sessions hold while live, and what is left after passivation.
func writeHeapProfile(prefix, stage string) {
	if prefix == "" {
		return
	}
	if f, err := os.Create(prefix + "." + stage + ".pb.gz"); err == nil {
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}

type memSample struct {
	heap, rss, anon uint64
	ms              runtime.MemStats
}

// measure collects garbage, returns freed memory to the OS and reads the live heap and the
// process's resident set (all of it, and its anonymous part: the file-backed rest is mostly
// the binary and bbolt's mapped database).
func measure() memSample {
	runtime.GC() // twice: sync.Pool victims survive one collection
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := memSample{heap: ms.HeapAlloc, ms: ms}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return s
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), ":")
		kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			s.rss = kb << 10
		case "RssAnon":
			s.anon = kb << 10
		}
	}
	return s
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }
