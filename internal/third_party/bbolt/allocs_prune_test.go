package bbolt_test

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/bbolt/internal/freelist"
)

// Tests of reef's patch to the freelist (internal/freelist/prune.go): pruning the txids of
// old allocations changes nothing a database does.

// freelistTrace is what a database's freelist looks like after each write transaction.
type freelistTrace struct {
	Free, Pending, FreeAlloc int
	Size                     int64
}

// growWithReaders appends to a log and rewrites a few hot keys in 3,000 write transactions
// while readers come and go, one of them open across 500 of the transactions, and returns
// the freelist after each transaction. The array freelist allocates deterministically, so
// two runs of it must give the same trace.
func growWithReaders(t *testing.T, o bolt.Options) []freelistTrace {
	// Growing the mapping waits for every reader to finish: map more than the test writes.
	o.InitialMmapSize = 256 << 20
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), 0o600, &o)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()

	var trace []freelistTrace
	var long *bolt.Tx
	short := map[int]*bolt.Tx{}
	for i := range 3000 {
		switch {
		case i == 500:
			long, err = db.Begin(false)
			require.NoError(t, err)
		case i == 1000:
			require.NoError(t, long.Rollback())
		case i%100 == 0:
			short[i], err = db.Begin(false)
			require.NoError(t, err)
		}
		if tx, ok := short[i-30]; ok {
			require.NoError(t, tx.Rollback())
		}
		require.NoError(t, db.Update(func(tx *bolt.Tx) error {
			// One bucket: Tx.Commit spills sub-buckets in map order, which would make the
			// page numbers differ from run to run.
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			key := []byte{'l', 0, 0, 0, 0, 0, 0, 0, 0}
			binary.BigEndian.PutUint64(key[1:], uint64(i))
			if err := b.Put(key, make([]byte, 100+i%300)); err != nil {
				return err
			}
			if i%5 == 0 { // some of the log is deleted again: its pages are freed
				binary.BigEndian.PutUint64(key[1:], uint64(i/2))
				if err := b.Delete(key); err != nil {
					return err
				}
			}
			return b.Put([]byte{'h', byte(i % 50)}, make([]byte, 100))
		}))
		s := db.Stats()
		trace = append(trace, freelistTrace{Free: s.FreePageN, Pending: s.PendingPageN, FreeAlloc: s.FreeAlloc})
		require.NoError(t, db.View(func(tx *bolt.Tx) error {
			trace[len(trace)-1].Size = tx.Size()
			return nil
		}))
	}
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}))
	return trace
}

func TestFreelist_allocsPrune_sameTrace(t *testing.T) {
	o := bolt.Options{NoSync: true, FreelistType: bolt.FreelistArrayType}
	defer freelist.SetMinAllocsPrune(freelist.SetMinAllocsPrune(math.MaxInt))
	upstream := growWithReaders(t, o)
	freelist.SetMinAllocsPrune(16)
	pruned := growWithReaders(t, o)
	require.Equal(t, upstream, pruned)
}

// reef's options: the hashmap freelist, not written to the file. Its allocations follow map
// order, so no trace to compare; the database must check out and, once the long reader is
// gone, reuse its pages instead of growing.
func TestFreelist_allocsPrune_hashmapNoSync(t *testing.T) {
	defer freelist.SetMinAllocsPrune(freelist.SetMinAllocsPrune(16))
	trace := growWithReaders(t, bolt.Options{NoSync: true, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	require.Equal(t, trace[1100].Size, trace[len(trace)-1].Size, "the file grew after the long reader closed")
	require.NotZero(t, trace[len(trace)-1].Free)
}
