package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence/bolt"
)

// TestIndexKeepsLittleInHeap: what an index keeps in the Go heap after building and
// searching 3,000 notes is a few bytes a chunk; postings, records and texts stay in the
// database's mapped file. The in-heap index of format 1 kept about 820 bytes a chunk here.
func TestIndexKeepsLittleInHeap(t *testing.T) {
	ws := t.TempDir()
	const notes = 3000
	for i := range notes {
		writeNote(t, ws, fmt.Sprintf("memory/%02d/n%04d.md", i/100, i), fmt.Sprintf("# Note %d\n\n%s ticket T-%05d %s\n", i, sentence(i), i, sentence(i+7)))
	}
	store, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC() // bbolt's page pool (a sync.Pool) keeps a commit's pages for one more cycle
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	x := New(Config{AgentID: "main", Workspace: ws, NoWatch: true}, store, zerolog.Nop())
	for _, q := range []string{"ticket", "T-01234", "walrus harbour"} {
		if _, err := x.Search(context.Background(), Query{Text: q}); err != nil {
			t.Fatal(err)
		}
	}
	kept := int64(heap()) - int64(before)
	runtime.KeepAlive(x)
	if st, _ := x.Status(context.Background()); st.Chunks != notes {
		t.Fatalf("%d chunks indexed, want %d", st.Chunks, notes)
	}
	if perChunk := kept / notes; perChunk > 100 {
		t.Errorf("the index keeps %d bytes in the heap (%d a chunk), want at most 100 a chunk", kept, perChunk)
	}
	t.Logf("kept %d bytes for %d chunks", kept, notes)
}
