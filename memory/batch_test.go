package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/reefgw/reef/persistence"
	pmem "github.com/reefgw/reef/persistence/memory"
)

// failingStore fails the Update calls its fail function picks; the rest go to the store.
type failingStore struct {
	persistence.Store
	updates int
	fail    func(n int) bool
}

func (s *failingStore) Update(fn func(persistence.Tx) error) error {
	s.updates++
	if s.fail != nil && s.fail(s.updates) {
		return errors.New("disk full")
	}
	return s.Store.Update(fn)
}

// Many new notes are written in batches, each consistent: a write that fails midway keeps
// what the batches before it wrote, and the next sync completes the index, with every note
// found once.
func TestSyncWritesInBatches(t *testing.T) {
	ws := t.TempDir()
	n := 2*syncBatch + 10
	for i := range n {
		writeNote(t, ws, fmt.Sprintf("memory/notes/n%04d.md", i), fmt.Sprintf("note %d about zebra%04d\n", i, i))
	}
	store := &failingStore{Store: pmem.New()}
	x := newIndex(t, ws, store, nil)
	store.fail = func(u int) bool { return u == 3 } // 1: the fresh state; 2: the first batch
	if _, err := x.Search(context.Background(), Query{Text: "zebra0001"}); err == nil {
		t.Fatal("a sync whose second batch could not be written said nothing")
	}
	if got, want := store.updates, 3; got != want {
		t.Fatalf("%d transactions before the failure, want %d (the notes are written in batches)", got, want)
	}
	// A restart reads what was committed: the first batch, consistent.
	store.fail = nil
	y := newIndex(t, ws, store, nil)
	before := store.updates
	for _, i := range []int{1, syncBatch + 1, n - 1} {
		resp := search(t, y, fmt.Sprintf("zebra%04d", i))
		if len(resp.Results) != 1 || resp.Results[0].Path != fmt.Sprintf("memory/notes/n%04d.md", i) {
			t.Fatalf("zebra%04d: got %+v, want its note once", i, resp.Results)
		}
	}
	// Two batches the failure lost; the first batch's notes are looked at again too when
	// they are younger than two seconds (their mtime is not trusted yet).
	if got := store.updates - before; got < 2 || got > 3 {
		t.Errorf("the completing sync wrote %d transactions, want 2 or 3 (one per batch of %d notes)", got, syncBatch)
	}
	st, err := y.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != n {
		t.Errorf("status: %d files indexed, want %d", st.Files, n)
	}
}
