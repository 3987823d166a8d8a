package freelist

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"go.etcd.io/bbolt/internal/common"
)

// span is an allocation in the simulated database: n pages from id, allocated by atx and,
// once freed, freed by ftx.
type span struct {
	id       common.Pgid
	n        int
	atx, ftx common.Txid
}

// sim is a database as the freelist sees it: the spans live in the last committed state, the
// freed spans an open reader may still read, the open readers and the file's high-water mark.
type sim struct {
	t         *testing.T
	rnd       *rand.Rand
	f, ref    Interface // ref (may be nil) runs in lockstep and must agree page for page
	committed common.Txid
	highWater common.Pgid // first page past the committed file
	live      map[common.Pgid]span
	freed     []span
	readers   []common.Txid
}

// simulate runs 2,000 random write transactions against f (and ref) and returns f.
func simulate(t *testing.T, seed int64, f, ref Interface) Interface {
	s := &sim{t: t, rnd: rand.New(rand.NewSource(seed)), f: f, ref: ref,
		committed: 1, highWater: 2, live: map[common.Pgid]span{}}
	s.each(func(f Interface) { f.Init(common.Pgids{}) })
	defer func(n int) { minAllocsPrune = n }(minAllocsPrune)
	minAllocsPrune = 64 // prune often: about 300 spans are live at a time
	for range 2000 {
		s.readerChurn()
		s.writeTx()
	}
	for _, r := range s.readers {
		s.each(func(f Interface) { f.RemoveReadonlyTXID(r) })
	}
	s.readers = nil
	s.each(func(f Interface) { f.ReleasePendingPages() })
	s.check()
	require.Empty(t, f.pendingPageIds(), "pages still pending with no reader open")
	var want common.Pgids
	for id := common.Pgid(2); id < s.highWater; id++ {
		if !s.isLive(id) {
			want = append(want, id)
		}
	}
	require.Equal(t, want, append(common.Pgids{}, f.freePageIds()...), "free pages with no reader open")
	return f
}

func (s *sim) each(do func(Interface)) {
	do(s.f)
	if s.ref != nil {
		do(s.ref)
	}
}

// readerChurn opens a reader on the committed state now and then, and closes some.
func (s *sim) readerChurn() {
	if len(s.readers) < 4 && s.rnd.Intn(10) == 0 {
		r := s.committed
		s.readers = append(s.readers, r)
		s.each(func(f Interface) { f.AddReadonlyTXID(r) })
	}
	for i := 0; i < len(s.readers); i++ {
		if s.rnd.Intn(25) == 0 {
			r := s.readers[i]
			s.readers = slices.Delete(s.readers, i, i+1)
			i--
			s.each(func(f Interface) { f.RemoveReadonlyTXID(r) })
		}
	}
	oldest := s.committed
	for _, r := range s.readers {
		oldest = min(oldest, r)
	}
	s.freed = slices.DeleteFunc(s.freed, func(sp span) bool { return sp.ftx <= oldest })
}

// writeTx begins a write transaction, frees and allocates a few spans, and commits or rolls
// back (as Tx.Rollback before commit, or as a failed commit that reloads the freelist).
func (s *sim) writeTx() {
	txid := s.committed + 1
	s.each(func(f Interface) { f.ReleasePendingPages() })

	var freed, allocated []span
	frees := s.rnd.Intn(4)
	if len(s.live) > 300 {
		frees += 2
	}
	for _, sp := range s.pick(frees) {
		s.each(func(f Interface) { f.Free(txid, common.NewPage(sp.id, common.LeafPageFlag, 0, uint32(sp.n-1))) })
		delete(s.live, sp.id)
		sp.ftx = txid
		freed = append(freed, sp)
	}
	userRollback := s.rnd.Intn(40) == 0
	highWater := s.highWater
	allocs := s.rnd.Intn(7)
	if userRollback { // Tx.Rollback before Commit: nothing was allocated, pages were freed
		allocs = 0
	}
	for range allocs {
		sp := span{n: 1 + s.rnd.Intn(3)*s.rnd.Intn(2), atx: txid}
		sp.id = s.f.Allocate(txid, sp.n)
		if s.ref != nil {
			require.Equal(s.t, sp.id, s.ref.Allocate(txid, sp.n), "tx %d allocated different pages", txid)
		}
		if sp.id == 0 {
			sp.id, highWater = highWater, highWater+common.Pgid(sp.n)
		}
		s.live[sp.id] = sp
		allocated = append(allocated, sp)
	}

	switch {
	case userRollback:
		s.each(func(f Interface) { f.Rollback(txid) })
		s.undo(freed, allocated)
	case s.rnd.Intn(30) == 0: // the commit failed: Tx.rollback reloads the free pages from the file
		s.each(func(f Interface) { f.Rollback(txid) })
		s.undo(freed, allocated)
		var onDisk common.Pgids
		for id := common.Pgid(2); id < s.highWater; id++ {
			if !s.isLive(id) {
				onDisk = append(onDisk, id)
			}
		}
		s.each(func(f Interface) { f.NoSyncReload(onDisk) })
	default:
		s.committed, s.highWater = txid, highWater
		s.freed = append(s.freed, freed...)
	}
	s.check()
}

func (s *sim) undo(freed, allocated []span) {
	for _, sp := range allocated {
		delete(s.live, sp.id)
	}
	for _, sp := range freed {
		sp.ftx = 0
		s.live[sp.id] = sp
	}
}

// pick returns up to n live spans allocated before this transaction, in a random order.
func (s *sim) pick(n int) []span {
	var ids []common.Pgid
	for id, sp := range s.live {
		if sp.atx <= s.committed {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	s.rnd.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	var spans []span
	for _, id := range ids[:min(n, len(ids))] {
		spans = append(spans, s.live[id])
	}
	return spans
}

func (s *sim) isLive(id common.Pgid) bool {
	for start := id; start >= 2 && start+3 > id; start-- {
		if sp, ok := s.live[start]; ok && id < start+common.Pgid(sp.n) {
			return true
		}
	}
	return false
}

// check: no live page and no page an open reader may read is free, and ref agrees with f.
func (s *sim) check() {
	s.t.Helper()
	free := map[common.Pgid]bool{}
	for _, id := range s.f.freePageIds() {
		free[id] = true
	}
	for _, sp := range s.live {
		for id := sp.id; id < sp.id+common.Pgid(sp.n); id++ {
			if free[id] {
				s.t.Fatalf("live page %d (tx %d) is free", id, sp.atx)
			}
		}
	}
	for _, sp := range s.freed {
		for _, r := range s.readers {
			for id := sp.id; sp.atx <= r && r < sp.ftx && id < sp.id+common.Pgid(sp.n); id++ {
				if free[id] {
					s.t.Fatalf("page %d (tx %d..%d) is free with reader %d open", id, sp.atx, sp.ftx, r)
				}
			}
		}
	}
	if s.ref != nil {
		require.Equal(s.t, s.ref.freePageIds(), s.f.freePageIds(), "free pages")
		require.Equal(s.t, allPendingPages(s.ref.pendingPageIds()), allPendingPages(s.f.pendingPageIds()), "pending pages")
	}
}
