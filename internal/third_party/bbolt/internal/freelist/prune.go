package freelist

import "go.etcd.io/bbolt/internal/common"

// This file is a patch of reef's copy of bbolt (see README.md at the copy's root).
//
// allocs maps the first page of every span allocated from the freelist to the txid that
// allocated it, and upstream removes an entry only when that span is freed. In a database that
// mostly grows, most spans are never freed, so allocs grows with the database for as long as it
// is open, and a Go map never gives its memory back.
//
// An entry is read in two places. Free copies it into txPending.alloctx, and releaseRange(begin,
// end) releases a pending page early only if its alloctx lies in [begin, end]. Rollback restores
// the entries of the pages the rolled-back transaction had freed. A missing entry reads as
// alloctx 0, which releaseRange never releases early: the page waits for release(minid-1), once
// no reader older than its freeing transaction is left.
//
// ReleasePendingPages calls releaseRange only with begin = r+1 for some open reader r (the
// range [oldest, oldest-1] it also passes is empty), or begin = MaxUint64 when no reader is
// open. A reader has the txid of the last committed transaction when it starts, and that
// never decreases. So once entry (page, a) has a < oldest open reader, and a < w, where w is a
// write transaction that allocated (readers starting later see at least w-1), every begin from
// then on is greater than a: the entry can only ever be compared and found outside the range,
// exactly like a missing one. Dropping it changes nothing but the memory it holds.

// minAllocsPrune is the smallest allocs map worth pruning: below it a prune costs more than
// the memory it could return. A variable so that tests can prune small freelists.
var minAllocsPrune = 1024

// recordAlloc notes that txid allocated the span starting at id.
func (t *shared) recordAlloc(id common.Pgid, txid common.Txid) {
	t.allocs[id] = txid
	if txid > t.lastAllocTxid {
		t.lastAllocTxid = txid
	}
}

// pruneAllocs drops the allocs entries older than both oldestReader (MaxUint64 when no reader
// is open) and the last transaction that allocated, once allocs has doubled since it was last
// pruned: the cost is amortised over the allocations that grew it. The survivors are copied
// into a new map, so the old one's memory is returned.
func (t *shared) pruneAllocs(oldestReader common.Txid) {
	if len(t.allocs) < max(t.allocsPruneAt, minAllocsPrune) {
		return
	}
	keepFrom := min(oldestReader, t.lastAllocTxid)
	kept := 0
	for _, txid := range t.allocs {
		if txid >= keepFrom {
			kept++
		}
	}
	allocs := make(map[common.Pgid]common.Txid, kept)
	for id, txid := range t.allocs {
		if txid >= keepFrom {
			allocs[id] = txid
		}
	}
	t.allocs = allocs
	t.allocsPruneAt = 2 * kept
}

// SetMinAllocsPrune sets the smallest allocs map that ReleasePendingPages prunes and returns
// the previous value; math.MaxInt turns pruning off. For tests (not safe while a DB is open).
func SetMinAllocsPrune(n int) int {
	old := minAllocsPrune
	minAllocsPrune = n
	return old
}
