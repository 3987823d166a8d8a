package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
	pmem "github.com/reefgw/reef/persistence/memory"
	"github.com/reefgw/reef/providers/fake"
)

// fakeEmbedder embeds in process with fake.Vector and counts what it embedded.
type fakeEmbedder struct {
	mu     sync.Mutex
	inputs int
	calls  int
	err    error
	dims   int
	hang   bool
}

func (e *fakeEmbedder) Embed(ctx context.Context, model string, input []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	err, dims, hang := e.err, e.dims, e.hang
	if err == nil {
		e.inputs += len(input)
	}
	e.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if dims == 0 {
		dims = 64
	}
	out := make([][]float32, len(input))
	for i, s := range input {
		out[i] = fake.Vector(s+model, dims)
	}
	return out, nil
}

func (e *fakeEmbedder) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inputs
}

func (e *fakeEmbedder) set(f func(e *fakeEmbedder)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e)
}

func writeNote(t testing.TB, ws, rel, text string) {
	t.Helper()
	p := filepath.Join(ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newIndex(t testing.TB, ws string, store persistence.Store, e *fakeEmbedder) *Index {
	cfg := Config{AgentID: "main", Workspace: ws}
	if e != nil {
		cfg.Embedder, cfg.Provider, cfg.Model = e, "fake", "fake-embed"
	}
	x := New(cfg, store, zerolog.Nop())
	t.Cleanup(func() { x.Close() })
	return x
}

func search(t testing.TB, x *Index, q string) Response {
	t.Helper()
	resp, err := x.Search(context.Background(), Query{Text: q})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return resp
}

// TestWalkthrough is the walkthrough at the index: an empty search, a note written,
// found by a Chinese paraphrase and by a word, with embeddings (hybrid) and without (fts).
func TestWalkthrough(t *testing.T) {
	for _, withEmbed := range []bool{true, false} {
		ws := t.TempDir()
		var e *fakeEmbedder
		if withEmbed {
			e = &fakeEmbedder{}
		}
		x := newIndex(t, ws, pmem.New(), e)
		wantMode := ModeFTS
		if withEmbed {
			wantMode = ModeHybrid
		}
		resp := search(t, x, "最喜欢的编程语言")
		if len(resp.Results) != 0 || resp.Mode != wantMode {
			t.Fatalf("empty memory: got %d results, mode %s; want none, %s", len(resp.Results), resp.Mode, wantMode)
		}
		writeNote(t, ws, "memory/preferences.md", "用户目前正在学习 Rust。\n")
		if err := x.Touch(context.Background(), "memory/preferences.md"); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"用户在学什么编程语言", "Rust"} {
			resp = search(t, x, q)
			if len(resp.Results) == 0 || resp.Results[0].Path != "memory/preferences.md" || resp.Mode != wantMode {
				t.Fatalf("embed=%v %q: got %+v, want memory/preferences.md first in mode %s", withEmbed, q, resp, wantMode)
			}
			r := resp.Results[0]
			if r.StartLine != 1 || r.EndLine != 1 || r.Citation != "memory/preferences.md#L1-L1" {
				t.Errorf("got lines %d-%d citation %q, want 1-1", r.StartLine, r.EndLine, r.Citation)
			}
			t.Logf("embed=%v %q: score %.3f", withEmbed, q, r.Score)
		}
	}
}

// TestIncremental: an unchanged workspace embeds nothing; editing one of many files embeds
// only its chunks; a new Index over the same store (a restart) embeds nothing; a new model
// embeds everything once.
func TestIncremental(t *testing.T) {
	ws := t.TempDir()
	const files = 1000
	for i := range files {
		writeNote(t, ws, filepathf("memory/notes/%03d.md", i), sentence(i))
	}
	// Old mtimes, so the index trusts them.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(ws, func(p string, _ os.DirEntry, _ error) error { os.Chtimes(p, old, old); return nil })
	store, e := pmem.New(), &fakeEmbedder{}
	x := newIndex(t, ws, store, e)
	ctx := context.Background()
	if err := x.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	first := e.count()
	if first != files {
		t.Fatalf("first index embedded %d texts, want %d", first, files)
	}
	if err := x.Sync(ctx); err != nil || e.count() != first {
		t.Fatalf("an unchanged sync embedded %d more (err %v)", e.count()-first, err)
	}
	writeNote(t, ws, "memory/notes/007.md", "The zebra ate the quantum pizza.\n")
	search(t, x, "zebra")
	if got := e.count() - first; got != 2 { // the file's one chunk and the query
		t.Fatalf("editing one file embedded %d texts, want 2 (its chunk and the query)", got)
	}
	if r := search(t, x, "quantum pizza"); len(r.Results) == 0 || r.Results[0].Path != "memory/notes/007.md" {
		t.Fatalf("the edit is not found: %+v", r.Results)
	}
	// A restart: a new Index over the same store.
	e2 := &fakeEmbedder{}
	y := newIndex(t, ws, store, e2)
	if err := y.Sync(ctx); err != nil || e2.count() != 0 {
		t.Fatalf("after a restart the sync embedded %d texts (err %v), want 0", e2.count(), err)
	}
	// Another model: everything once, then nothing.
	e3 := &fakeEmbedder{}
	z := New(Config{AgentID: "main", Workspace: ws, Embedder: e3, Provider: "fake", Model: "other-model"}, store, zerolog.Nop())
	t.Cleanup(func() { z.Close() })
	if err := z.Sync(ctx); err != nil || e3.count() != files {
		t.Fatalf("a new model embedded %d texts (err %v), want %d", e3.count(), err, files)
	}
	if err := z.Sync(ctx); err != nil || e3.count() != files {
		t.Fatalf("the second sync on the new model embedded %d more", e3.count()-files)
	}
	st, err := z.Status(ctx)
	if err != nil || st.Files != files || st.Chunks != files || st.Vectors != files || st.Rebuilds != 1 {
		t.Fatalf("status %+v (err %v)", st, err)
	}
	// A deleted file leaves the index.
	os.Remove(filepath.Join(ws, "memory/notes/007.md"))
	if r := search(t, z, "zebra quantum pizza"); len(r.Results) > 0 && r.Results[0].Path == "memory/notes/007.md" {
		t.Fatal("a deleted file is still found")
	}
}

// TestEmbeddingFaults: the embedder down, hanging past the timeout, or answering the wrong
// dimension: search answers in fts mode and says why, and recovers when it works again.
func TestEmbeddingFaults(t *testing.T) {
	cases := map[string]func(e *fakeEmbedder){
		"down":      func(e *fakeEmbedder) { e.err = errors.New("connection refused") },
		"hang":      func(e *fakeEmbedder) { e.hang = true },
		"wrong dim": func(e *fakeEmbedder) { e.dims = 32 },
	}
	for name, fault := range cases {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			writeNote(t, ws, "MEMORY.md", "# Me\n\nMy cat is called Miso.\n")
			e := &fakeEmbedder{}
			x := newIndex(t, ws, pmem.New(), e)
			x.cfg.QueryTimeout, x.cfg.IndexTimeout = 50*time.Millisecond, 50*time.Millisecond
			now := time.Now()
			x.clock = func() time.Time { return now }
			if r := search(t, x, "cat"); r.Mode != ModeHybrid {
				t.Fatalf("healthy: mode %s", r.Mode)
			}
			e.set(fault)
			r := search(t, x, "Miso")
			if r.Mode != ModeFTS || r.Warning == "" || len(r.Results) == 0 {
				t.Fatalf("faulty: got mode %s warning %q results %d; want fts with a warning and the note", r.Mode, r.Warning, len(r.Results))
			}
			t.Logf("warning: %s", r.Warning)
			e.set(func(e *fakeEmbedder) { e.err, e.hang, e.dims = nil, false, 0 })
			if r := search(t, x, "Miso"); r.Mode != ModeFTS {
				t.Fatalf("within the retry pause: mode %s, want fts", r.Mode)
			}
			now = now.Add(2 * time.Minute)
			if r := search(t, x, "Miso"); r.Mode != ModeHybrid {
				t.Fatalf("after the pause: mode %s warning %q, want hybrid", r.Mode, r.Warning)
			}
		})
	}
}

// TestDamagedIndexIsRebuilt: records that do not decode, or chunks that are missing, are
// detected at load and the index is rebuilt from the files, never served.
func TestDamagedIndexIsRebuilt(t *testing.T) {
	damage := map[string]func(tx persistence.Tx, b buckets) error{
		"garbage chunk": func(tx persistence.Tx, b buckets) error {
			return tx.Put(b.chunks, chunkKey("MEMORY.md", 0), []byte("{nope"))
		},
		"missing chunk": func(tx persistence.Tx, b buckets) error { return tx.Delete(b.chunks, chunkKey("MEMORY.md", 0)) },
		"short vector": func(tx persistence.Tx, b buckets) error {
			return tx.Put(b.vectors, docKey(0), []byte{1, 2, 3})
		},
		"garbage state": func(tx persistence.Tx, b buckets) error { return tx.Put(b.meta, "state", []byte("]")) },
		"stray chunk": func(tx persistence.Tx, b buckets) error {
			return tx.Put(b.chunks, chunkKey("gone.md", 3), []byte(`{"path":"gone.md","text":"x"}`))
		},
		"future version": func(tx persistence.Tx, b buckets) error { return tx.Put(b.meta, "state", []byte(`{"version":99}`)) },
	}
	for name, hurt := range damage {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			writeNote(t, ws, "MEMORY.md", "Project Falcon launches on 2025-03-14.\n")
			store := pmem.New()
			ctx := context.Background()
			if err := newIndex(t, ws, store, &fakeEmbedder{}).Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if err := store.Update(func(tx persistence.Tx) error { return hurt(tx, bucketsFor("main")) }); err != nil {
				t.Fatal(err)
			}
			x := newIndex(t, ws, store, &fakeEmbedder{})
			r := search(t, x, "Falcon")
			if len(r.Results) != 1 || r.Results[0].Path != "MEMORY.md" {
				t.Fatalf("after damage got %+v, want the note", r.Results)
			}
			st, _ := x.Status(ctx)
			if st.Rebuilds != 1 || st.Chunks != 1 {
				t.Fatalf("status %+v, want one rebuild and one chunk", st)
			}
		})
	}
}

func filepathf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// sentence is a distinct short note for file i.
func sentence(i int) string {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}
	return fmt.Sprintf("# Note %d\n\nMeeting with %s about %s, ticket T-%04d.\n", i, words[i%10], words[(i/10)%10], i)
}

// TestBadFiles: a binary file, a file over the size limit, invalid UTF-8, a FIFO and a
// symlink out of the workspace in memory/: none stalls or breaks the index; the text ones
// are indexed, the others skipped and counted.
func TestBadFiles(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	writeNote(t, ws, "memory/ok.md", "The kiwi note.\n")
	writeNote(t, ws, "memory/bin.md", "PK\x03\x04\x00\x00binary kiwi")
	writeNote(t, ws, "memory/latin1.md", "caf\xe9 kiwi cr\xe8me\n")
	writeNote(t, outside, "secret.md", "kiwi secret outside\n")
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws, "memory", "link.md"))
	if err := syscall.Mkfifo(filepath.Join(ws, "memory", "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(ws, "memory", "big.md"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(50 << 20) // 50 MB, sparse
	big.Close()
	x := newIndex(t, ws, pmem.New(), &fakeEmbedder{})
	r := search(t, x, "kiwi")
	var paths []string
	for _, res := range r.Results {
		paths = append(paths, res.Path)
	}
	slices.Sort(paths)
	if want := []string{"memory/latin1.md", "memory/ok.md"}; !slices.Equal(paths, want) {
		t.Fatalf("found %v, want %v", paths, want)
	}
	st, err := x.Status(context.Background())
	if err != nil || st.Skipped != 2 || st.Files != 4 {
		t.Fatalf("status %+v (err %v): want 4 files with 2 skipped (binary, too large)", st, err)
	}
	for _, res := range r.Results {
		if !utf8.ValidString(res.Snippet) {
			t.Errorf("snippet %q is not valid UTF-8", res.Snippet)
		}
	}
}

// TestTouchRereadsWhatStatCannotSee: an edit that keeps size and mtime is invisible to the
// stat scan, but the file tools' Touch re-reads the file at once.
func TestTouchRereadsWhatStatCannotSee(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "MEMORY.md")
	writeNote(t, ws, "MEMORY.md", "colour: orange\n")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	x := newIndex(t, ws, pmem.New(), nil)
	x.cfg.NoWatch = true // a watcher sees such an edit (TestWatcher); the stat scan cannot
	if r := search(t, x, "orange"); len(r.Results) != 1 {
		t.Fatalf("got %+v", r.Results)
	}
	writeNote(t, ws, "MEMORY.md", "colour: purple\n") // same size
	os.Chtimes(p, old, old)                           // same mtime
	if r := search(t, x, "purple"); len(r.Results) != 0 {
		t.Fatalf("the stat scan saw an edit it cannot see: %+v", r.Results)
	}
	if err := x.Touch(context.Background(), "MEMORY.md"); err != nil {
		t.Fatal(err)
	}
	if r := search(t, x, "purple"); len(r.Results) != 1 {
		t.Fatalf("after Touch: %+v", r.Results)
	}
	if err := x.Touch(context.Background(), "notes.md"); err != nil { // not a memory file: ignored
		t.Fatal(err)
	}
}

// TestTouchDoesNotWaitForEmbeddings: with the embedder hanging, a write's Touch returns at
// once and the note is found by keyword.
func TestTouchDoesNotWaitForEmbeddings(t *testing.T) {
	ws := t.TempDir()
	e := &fakeEmbedder{hang: true}
	x := newIndex(t, ws, pmem.New(), e)
	writeNote(t, ws, "memory/new.md", "The walrus note.\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := x.Touch(ctx, "memory/new.md"); err != nil || ctx.Err() != nil {
		t.Fatalf("touch: %v (ctx %v)", err, ctx.Err())
	}
	e.mu.Lock()
	calls := e.calls
	e.mu.Unlock()
	if calls != 0 {
		t.Fatalf("Touch called the embedder %d times", calls)
	}
	x.cfg.QueryTimeout, x.cfg.IndexTimeout = 20*time.Millisecond, 20*time.Millisecond
	if r := search(t, x, "walrus"); len(r.Results) != 1 || r.Mode != ModeFTS {
		t.Fatalf("got %+v", r)
	}
}
