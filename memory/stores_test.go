package memory

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	pmem "github.com/reefgw/reef/persistence/memory"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// storeKinds are the stores the index is tested on. PostgreSQL (cluster mode) runs when
// REEF_TEST_DATABASE_URL names a server (eval "$(.ci/postgres.sh start DIR)"), else skips.
var storeKinds = []string{"memory", "bolt", "postgres"}

func openStore(t *testing.T, kind string) persistence.Store {
	t.Helper()
	switch kind {
	case "memory":
		return pmem.New()
	case "bolt":
		s, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	default:
		s, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

// TestIncrementalOnEveryStore: notes added, changed and removed are found as they are now,
// the documents' numbers are reused, and an index read again from the store (a restart)
// ranks as the one that wrote it.
func TestIncrementalOnEveryStore(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			store := openStore(t, kind)
			ws := t.TempDir()
			for i := range 30 {
				writeNote(t, ws, fmt.Sprintf("memory/n%02d.md", i), fmt.Sprintf("# Note %d\n\nwalrus %d and the harbour %s\n", i, i, sentence(i)))
			}
			x := New(Config{AgentID: "main", Workspace: ws, NoWatch: true}, store, zerolog.Nop())
			if got := paths(search(t, x, "walrus")); len(got) != DefaultMaxResults {
				t.Fatalf("walrus: %v", got)
			}
			writeNote(t, ws, "memory/n03.md", "# Note 3\n\nnow about a narwhal only\n")
			if err := os.Remove(filepath.Join(ws, "memory", "n04.md")); err != nil {
				t.Fatal(err)
			}
			writeNote(t, ws, "memory/new.md", "a narwhal and a walrus\n")
			x.mu.Lock()
			x.scanned = x.scanned.AddDate(-1, 0, 0) // scan now
			x.mu.Unlock()
			got := paths(search(t, x, "narwhal"))
			if !slices.Equal(got, []string{"memory/new.md", "memory/n03.md"}) && !slices.Equal(got, []string{"memory/n03.md", "memory/new.md"}) {
				t.Fatalf("narwhal: %v, want n03 and new", got)
			}
			st, err := x.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Files != 30 || st.Chunks != 30 || st.Rebuilds != 0 {
				t.Fatalf("status %+v, want 30 files and chunks, no rebuild", st)
			}
			// n03's and n04's numbers were freed by the write that numbered new.md and n03's new
			// chunk (30 and 31); the next new note takes one of them.
			writeNote(t, ws, "memory/new2.md", "a quokka and a narwhal\n")
			x.mu.Lock()
			x.scanned = x.scanned.AddDate(-1, 0, 0)
			x.mu.Unlock()
			if got := paths(search(t, x, "quokka")); len(got) != 1 || got[0] != "memory/new2.md" {
				t.Fatalf("quokka: %v", got)
			}
			x.mu.Lock()
			if len(x.m.dl) != 32 || x.m.live != 31 {
				t.Errorf("%d document numbers for %d chunks, want 32 for 31: numbers are not reused", len(x.m.dl), x.m.live)
			}
			x.mu.Unlock()
			if err := os.Remove(filepath.Join(ws, "memory", "new2.md")); err != nil {
				t.Fatal(err)
			}
			x.mu.Lock()
			x.scanned = x.scanned.AddDate(-1, 0, 0)
			x.mu.Unlock()
			zero := 0.0
			q := Query{Text: "walrus harbour narwhal 7", MaxResults: 20, MinScore: &zero}
			before, err := x.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			y := New(Config{AgentID: "main", Workspace: ws, NoWatch: true}, store, zerolog.Nop())
			after, err := y.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(paths(before), paths(after)) || len(after.Results) == 0 {
				t.Errorf("read again from the store: %v, the writer ranked %v", paths(after), paths(before))
			}
			if st, _ := y.Status(context.Background()); st.Rebuilds != 0 || st.Chunks != 30 {
				t.Errorf("read again: %+v", st)
			}
		})
	}
}

// TestSharedWritersStayConsistent: two nodes share a workspace and a database, each with
// its own memory of the index. A note written through one, then another through the other
// (whose memory of the index is stale), both end in the index once, numbered apart: a
// third node reads the index whole (no rebuild) and finds both. Without the generation
// check, the second writer numbered its note as the first one's and the index was damaged.
func TestSharedWritersStayConsistent(t *testing.T) {
	for _, kind := range []string{"memory", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			store := openStore(t, kind)
			ws := t.TempDir()
			writeNote(t, ws, "MEMORY.md", "# Notes\n\nThe boat is blue.\n")
			node := func() *Index {
				x := New(Config{AgentID: "main", Workspace: ws, Shared: true}, store, zerolog.Nop())
				t.Cleanup(func() { x.Close() })
				return x
			}
			a, b := node(), node()
			search(t, a, "boat")
			search(t, b, "boat")
			writeNote(t, ws, "memory/a.md", "Ingrid runs the harbour.\n")
			if err := a.Touch(context.Background(), "memory/a.md"); err != nil {
				t.Fatal(err)
			}
			writeNote(t, ws, "memory/b.md", "Sven paints the lighthouse.\n")
			if err := b.Touch(context.Background(), "memory/b.md"); err != nil {
				t.Fatal(err)
			}
			c := node()
			for q, want := range map[string]string{"Ingrid": "memory/a.md", "Sven": "memory/b.md", "boat": "MEMORY.md"} {
				for name, x := range map[string]*Index{"a": a, "b": b, "c": c} {
					if got := paths(search(t, x, q)); !slices.Equal(got, []string{want}) {
						t.Errorf("node %s: %s finds %v, want %s", name, q, got, want)
					}
				}
			}
			st, err := c.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Rebuilds != 0 || st.Chunks != 3 {
				t.Errorf("a third node reads %+v, want 3 chunks and no rebuild", st)
			}
		})
	}
}

// TestUpgradeFromVersion1: testdata/index-v1.db.gz is a bbolt file the in-heap index
// (format 1, ca93122) wrote over the quality notes, with vectors. This code drops it and
// builds format 2 at the first search, once, and embeds nothing again (the embedding cache
// is kept).
func TestUpgradeFromVersion1(t *testing.T) {
	zipped, err := os.Open(filepath.Join("testdata", "index-v1.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer zipped.Close()
	zr, err := gzip.NewReader(zipped)
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "reef.db")
	f, err := os.OpenFile(dbPath, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, zr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	store, err := bolt.Open(dbPath, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var old state
	err = store.View(func(r persistence.Reader) error {
		var err error
		old, _, err = readState(r, bucketsFor("main"))
		return err
	})
	if err != nil || old.Version != 1 {
		t.Fatalf("the test file holds version %d (%v), want 1", old.Version, err)
	}
	ws := t.TempDir()
	for p, text := range qualityNotes {
		writeNote(t, ws, p, text)
	}
	e := &fakeEmbedder{}
	x := newIndex(t, ws, store, e)
	if got := paths(search(t, x, "Falcon launch date")); len(got) == 0 || got[0] != "memory/projects/falcon.md" {
		t.Fatalf("after the upgrade: %v", got)
	}
	st, err := x.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Rebuilds != 1 || st.Files != len(qualityNotes) || st.Chunks != len(qualityNotes) || st.Vectors != st.Chunks {
		t.Errorf("status %+v, want one rebuild, %d files and chunks, each with a vector", st, len(qualityNotes))
	}
	x.mu.Lock()
	if bits := x.m.vectors(); bits != x.m.nvec {
		t.Errorf("the mirror counts %d vectors and has %d vector bits", x.m.nvec, bits)
	}
	x.mu.Unlock()
	if got := e.count(); got != 1 {
		t.Errorf("%d texts embedded, want 1 (the query): the notes' vectors are in the kept cache", got)
	}
	err = store.View(func(r persistence.Reader) error {
		return r.Scan(bucketsFor("main").vectors, "", func(k string, _ []byte) error {
			if _, ok := docID(k); !ok {
				t.Errorf("a vector of format 1 is left: %q", k)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	y := newIndex(t, ws, store, e)
	search(t, y, "Falcon")
	if st, _ := y.Status(context.Background()); st.Rebuilds != 0 {
		t.Errorf("the upgraded index was rebuilt again: %+v", st)
	}
}
