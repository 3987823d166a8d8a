package bbolt_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"testing"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/bbolt/internal/freelist"
)

// BenchmarkDB_AppendHeap measures the Go heap an open database holds after many commits
// that append to it, as reef's transcripts do (reef's options: hashmap freelist, not synced),
// with upstream's freelist (allocs never pruned) and with reef's patch. Run it with
// -benchtime 1x: one iteration is the whole history.
//
//	go test -run '^$' -bench AppendHeap -benchtime 1x .
func BenchmarkDB_AppendHeap(b *testing.B) {
	for _, commits := range []int{20_000, 100_000} {
		for _, mode := range []struct {
			name string
			min  int
		}{{"upstream", math.MaxInt}, {"pruned", 1024}} {
			b.Run(fmt.Sprintf("commits=%d/%s", commits, mode.name), func(b *testing.B) {
				defer freelist.SetMinAllocsPrune(freelist.SetMinAllocsPrune(mode.min))
				for b.Loop() {
					heap, size := appendHeap(b, commits)
					b.ReportMetric(heap/(1<<20), "heap-MB")
					b.ReportMetric(float64(size)/(1<<20), "db-MB")
				}
			})
		}
	}
}

// appendHeap appends ~1 KB to one of 100 "sessions" in each of n commits and returns the Go
// heap in use with the database open, over that before it was opened, and the file's size.
func appendHeap(b *testing.B, n int) (float64, int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	db, err := bolt.Open(filepath.Join(b.TempDir(), "db"), 0o600,
		&bolt.Options{NoSync: true, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, 1000)
	for i := range n {
		err := db.Update(func(tx *bolt.Tx) error {
			s, err := tx.CreateBucketIfNotExists([]byte(fmt.Sprintf("session-%02d", i%100)))
			if err != nil {
				return err
			}
			var key [8]byte
			binary.BigEndian.PutUint64(key[:], uint64(i))
			return s.Put(key[:], value)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	var size int64
	if err := db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		b.Fatal(err)
	}
	return float64(after.HeapAlloc) - float64(before.HeapAlloc), size
}
