package freelist

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"go.etcd.io/bbolt/internal/common"
)

// Tests of reef's allocs pruning (prune.go).

func bothFreelists() map[string]func() Interface {
	return map[string]func() Interface{"array": NewArrayFreelist, "hashmap": NewHashMapFreelist}
}

func sharedOf(f Interface) *shared {
	switch f := f.(type) {
	case *array:
		return f.shared
	case *hashMap:
		return f.shared
	}
	panic(fmt.Sprintf("unknown freelist %T", f))
}

// commitTxs runs write transactions from..to-1 as beginRWTx and commit do: each releases
// pending pages, then allocates perTx single pages. It returns the allocating txid of each page.
func commitTxs(t *testing.T, f Interface, from, to common.Txid, perTx int, allocated map[common.Pgid]common.Txid) {
	t.Helper()
	for txid := from; txid < to; txid++ {
		f.ReleasePendingPages()
		for range perTx {
			id := f.Allocate(txid, 1)
			require.NotZero(t, id, "tx %d ran out of free pages", txid)
			allocated[id] = txid
		}
		require.LessOrEqual(t, len(sharedOf(f).allocs), minAllocsPrune+perTx, "allocs after tx %d", txid)
	}
}

func freePages(n int) common.Pgids {
	ids := make(common.Pgids, n)
	for i := range ids {
		ids[i] = common.Pgid(i + 2)
	}
	return ids
}

// With no reader open, allocs stays bounded however many pages are allocated and never freed
// (upstream: one entry per page, 30,000 here).
func TestFreelist_pruneAllocs_noReader(t *testing.T) {
	for name, newFreelist := range bothFreelists() {
		t.Run(name, func(t *testing.T) {
			f := newFreelist()
			f.Init(freePages(30_000))
			commitTxs(t, f, 2, 3002, 10, map[common.Pgid]common.Txid{})
			require.Less(t, len(sharedOf(f).allocs), minAllocsPrune+10)
		})
	}
}

// A long-lived reader keeps every entry it may still need: those of transactions at or after
// it. The older ones go, and pages are released exactly as before: early when allocated and
// freed after the reader, once the reader is gone when allocated before it.
func TestFreelist_pruneAllocs_longReader(t *testing.T) {
	for name, newFreelist := range bothFreelists() {
		t.Run(name, func(t *testing.T) {
			f := newFreelist()
			f.Init(freePages(40_000))
			allocated := map[common.Pgid]common.Txid{}
			commitTxs(t, f, 2, 1001, 10, allocated)

			const reader = common.Txid(1000) // began after tx 1000 committed
			f.AddReadonlyTXID(reader)
			// 30,000 entries that cannot be pruned while the reader is open.
			before := len(sharedOf(f).allocs)
			for txid := common.Txid(1001); txid < 4001; txid++ {
				f.ReleasePendingPages()
				for range 10 {
					allocated[f.Allocate(txid, 1)] = txid
				}
			}
			want := map[common.Pgid]common.Txid{}
			for id, txid := range allocated {
				if txid >= reader {
					want[id] = txid
				}
			}
			require.Less(t, before, minAllocsPrune+10)
			require.Equal(t, want, sharedOf(f).allocs)

			var old, young common.Pgid // allocated before and after the reader
			for id, txid := range allocated {
				switch {
				case txid == 500:
					old = id
				case txid == 2000:
					young = id
				}
			}
			f.ReleasePendingPages()
			f.Free(4001, common.NewPage(old, common.LeafPageFlag, 0, 0))
			f.Free(4001, common.NewPage(young, common.LeafPageFlag, 0, 0))

			f.ReleasePendingPages() // tx 4002, the reader still open
			require.Contains(t, f.freePageIds(), young, "freed after the reader and allocated after it")
			require.NotContains(t, f.freePageIds(), old, "the reader may still read it")
			require.Equal(t, common.Pgids{old}, allPendingPages(f.pendingPageIds()))

			f.RemoveReadonlyTXID(reader)
			f.ReleasePendingPages() // tx 4003
			require.Contains(t, f.freePageIds(), old)
			require.Empty(t, f.pendingPageIds())
		})
	}
}

// Pruning changes nothing a database can observe: a random history of write transactions,
// rollbacks and readers leaves the pruned freelist with exactly the free and pending pages of
// one that never prunes (upstream's behaviour), and neither ever frees a page that is live or
// that an open reader may read.
func TestFreelist_pruneAllocs_sameAsUpstream(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("array/seed=%d", seed), func(t *testing.T) {
			ref := NewArrayFreelist()
			sharedOf(ref).allocsPruneAt = math.MaxInt
			pruned := simulate(t, seed, NewArrayFreelist(), ref)
			require.Less(t, len(sharedOf(pruned).allocs), len(sharedOf(ref).allocs), "nothing was pruned")
		})
		// The hashmap freelist picks among free spans in map order, so two of them cannot run in
		// lockstep: the simulation checks its invariants alone.
		t.Run(fmt.Sprintf("hashmap/seed=%d", seed), func(t *testing.T) {
			simulate(t, seed, NewHashMapFreelist(), nil)
		})
	}
}
