package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
)

// Embedder turns texts into vectors, one per input, in order. providers' clients implement it.
type Embedder interface {
	Embed(ctx context.Context, model string, input []string) ([][]float32, error)
}

// Config configures one agent's index. Zero fields take the defaults shown.
type Config struct {
	AgentID   string
	Workspace string // absolute path
	// ChunkTokens and OverlapTokens size the chunks: default 400 and 80.
	ChunkTokens, OverlapTokens int
	MaxFileBytes               int64 // larger notes are skipped; default 4 MB
	// Embedder is nil for keyword search only. Provider and Model name it in results.
	Embedder        Embedder
	Provider, Model string
	BatchSize       int           // texts per embeddings request; default 64
	QueryTimeout    time.Duration // one query's embedding call; default 15s
	IndexTimeout    time.Duration // one batch's embedding call while indexing; default 60s
	RetryAfter      time.Duration // after a failed embedding call, keyword only this long; default 1m
	// Sessions indexes the agent's own conversations (user and assistant text) too; a sync
	// looks for new turns at most every SessionsEvery (default 5s).
	Sessions      bool
	SessionsEvery time.Duration
	// Notes changed outside reef are seen through a file watcher (inotify); without one
	// (NoWatch, another system, the kernel's limits reached) a sync stats every note at most
	// every ScanEvery (default 2s).
	NoWatch   bool
	ScanEvery time.Duration
	// Shared says the workspace is shared with other reef nodes (cluster mode, a network
	// file system): a watcher sees only this machine's writes, so there is none, and every
	// sync stats every note and re-reads those whose size or mtime changed. A note written
	// through another node is found by the next search.
	Shared bool
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.ChunkTokens, 400)
	if c.OverlapTokens <= 0 {
		c.OverlapTokens = 80
	}
	c.OverlapTokens = min(c.OverlapTokens, c.ChunkTokens/2)
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = 4 << 20
	}
	def(&c.BatchSize, 64)
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur(&c.QueryTimeout, 15*time.Second)
	defDur(&c.IndexTimeout, 60*time.Second)
	defDur(&c.RetryAfter, time.Minute)
	defDur(&c.SessionsEvery, 5*time.Second)
	defDur(&c.ScanEvery, 2*time.Second)
	if c.Embedder == nil {
		c.Model, c.Provider = "", "none"
	}
	return c
}

// Index is one agent's memory index. Build it with New; it is safe for concurrent use.
type Index struct {
	cfg   Config
	store persistence.Store
	b     buckets
	log   zerolog.Logger
	clock func() time.Time

	mu       sync.Mutex
	m        *mirror // what the index keeps in memory of the store's index; nil until the first sync
	force    map[string]bool
	synced   time.Time
	sessAt   time.Time // when the transcripts were last looked at
	watch    watcher   // nil: none (yet, or watchErr says why not)
	watchErr error
	scanned  time.Time       // the last stat scan of every note
	pending  map[string]bool // notes the watcher saw change, not yet looked at
	embedOK  time.Time       // embedding calls are skipped before this (after a failure)
	embedWhy string          // why the last embedding call failed
	stats    Stats
	batches  int // written by the running sync
}

// New returns the index of one agent over store. It reads nothing until the first Sync.
func New(cfg Config, store persistence.Store, log zerolog.Logger) *Index {
	cfg = cfg.withDefaults()
	return &Index{cfg: cfg, store: store, b: bucketsFor(cfg.AgentID), log: log, clock: time.Now, force: map[string]bool{},
		pending: map[string]bool{}}
}

// Touch re-reads the file rel (relative to the workspace) at once, whatever its size and
// mtime say, if it is a memory file. The file tools call it after a write or an edit. It
// embeds nothing, so a slow embedding provider never holds up a write: keyword search finds
// the new text at once, and the next search's sync adds its vectors.
func (x *Index) Touch(ctx context.Context, rel string) error {
	if !IsMemoryPath(rel) {
		return nil
	}
	x.mu.Lock()
	x.force[rel] = true
	x.mu.Unlock()
	return x.sync(ctx, false)
}

// Rebuild drops the index and builds it again from the files (reef memory index --force).
func (x *Index) Rebuild(ctx context.Context) error {
	x.mu.Lock()
	err := x.reset()
	x.mu.Unlock()
	if err != nil {
		return fmt.Errorf("memory: rebuild: %w", err)
	}
	return x.Sync(ctx)
}

// Sync brings the index up to date with the workspace: a stat per memory file, a read of
// those whose size or mtime changed, new chunks for those whose content changed, vectors
// for chunks without one.
func (x *Index) Sync(ctx context.Context) error { return x.sync(ctx, true) }

// sync is Sync; embed says whether to embed the chunks without a vector. A damaged index
// found on the way is dropped and built again.
func (x *Index) sync(ctx context.Context, embed bool) error {
	x.mu.Lock()
	x.batches = 0
	err := x.syncLocked(ctx, embed, 0)
	if errors.Is(err, errDamaged) {
		if err = x.rebuildDamaged(err); err == nil {
			err = x.syncLocked(ctx, embed, 0)
		}
	}
	clear(x.force)
	large := x.batches >= releaseAfter
	x.mu.Unlock()
	if large {
		// What a large sync read, cut and wrote is garbage now; the runtime would return
		// the heap it grew to only after its next collection, up to two minutes away in a
		// quiet gateway: a first build of 10,000 notes left 19–21 MB anonymous, now 10–12.
		debug.FreeOSMemory()
	}
	return err
}

// releaseAfter is how many batches a sync writes before it returns the memory it used to
// the system when it ends (a first build, a rebuild, many notes added at once).
const releaseAfter = 8

// maxStale is how many times a sync starts over when another node wrote the index meanwhile.
const maxStale = 3

// syncLocked is sync with x.mu held; attempt counts the starts over.
func (x *Index) syncLocked(ctx context.Context, embed bool, attempt int) error {
	if err := x.ensureLoaded(); err != nil {
		return err
	}
	root, err := os.OpenRoot(x.cfg.Workspace)
	if err != nil {
		return fmt.Errorf("memory: open workspace: %w", err)
	}
	defer root.Close()
	found, gone, full, err := x.filesToCheck(root)
	if err != nil {
		return err
	}
	checks, gone, err := x.compare(found, gone, full)
	if err != nil {
		return fmt.Errorf("memory: read index: %w", err)
	}
	// In batches of syncBatch files: a file's record and its chunks are always written in
	// one transaction, so the index is consistent after each; but the changes of 10,000
	// new notes held at once, and written in one transaction, were 190 MB.
	for first := true; first || len(checks) > 0; first = false {
		batch := checks[:min(len(checks), syncBatch)]
		checks = checks[len(batch):]
		ch := x.changes(root, batch, gone)
		gone = nil
		if now := x.clock(); first && (x.sessAt.IsZero() || now.Sub(x.sessAt) >= x.cfg.SessionsEvery) {
			if err := x.store.View(func(r persistence.Reader) error { return x.sessionChanges(r, ch) }); err != nil {
				return fmt.Errorf("memory: read sessions: %w", err)
			}
			x.sessAt = now
		}
		if embed {
			x.embedMissing(ctx, ch)
		}
		if ch.empty() {
			continue
		}
		var w *written
		err = x.store.Update(func(tx persistence.Tx) error {
			var err error
			w, err = ch.write(tx, x.b, x.m)
			return err
		})
		if errors.Is(err, errStale) && attempt < maxStale {
			// Another node wrote the index: read it again and look at everything again.
			x.m, x.scanned, x.sessAt = nil, time.Time{}, time.Time{}
			return x.syncLocked(ctx, embed, attempt+1)
		}
		if err != nil {
			x.scanned = time.Time{} // what the watcher reported is lost with the changes: scan next time
			return fmt.Errorf("memory: write index: %w", err)
		}
		x.m.apply(w)
		x.stats.Reindexed += len(ch.files)
		x.batches++
	}
	x.synced = x.clock()
	return nil
}

// syncBatch is how many of the notes a sync looks at are read, cut and written together.
const syncBatch = 256

// toCheck is a memory file a sync reads: found changed (or new, or touched), with what the
// index holds of it.
type toCheck struct {
	f   statFile
	old *fileRec // nil: not indexed
}

// compare looks up the files found in the index and returns those to read, and of gone
// the ones indexed. After a full scan, found is every note: it is compared with the files
// bucket in one pass in key order (no lookup per note, which on PostgreSQL is a query), and
// the indexed notes not found are gone too.
func (x *Index) compare(found []statFile, gone []string, full bool) ([]toCheck, []string, error) {
	var checks []toCheck
	look := func(f statFile, old fileRec, had bool) {
		if !had {
			checks = append(checks, toCheck{f: f})
		} else if x.force[f.path] || old.Size != f.size || old.MTime != f.mtime {
			checks = append(checks, toCheck{f: f, old: &old})
		}
	}
	var indexedGone []string
	err := x.store.View(func(r persistence.Reader) error {
		if !full {
			for _, f := range found {
				old, had, err := readFile(r, x.b, f.path)
				if err != nil {
					return err
				}
				look(f, old, had)
			}
			for _, p := range gone {
				if _, had, err := readFile(r, x.b, p); err != nil || had {
					indexedGone = append(indexedGone, p)
					if err != nil {
						return err
					}
				}
			}
			return nil
		}
		slices.SortFunc(found, func(a, b statFile) int { return strings.Compare(a.path, b.path) })
		i := 0
		err := r.Scan(x.b.files, "", func(p string, v []byte) error {
			for ; i < len(found) && found[i].path < p; i++ {
				look(found[i], fileRec{}, false)
			}
			if i < len(found) && found[i].path == p {
				var old fileRec
				if err := json.Unmarshal(v, &old); err != nil {
					return fmt.Errorf("%w: file %s: %v", errDamaged, p, err)
				}
				look(found[i], old, true)
				i++
			} else if !IsSessionPath(p) {
				indexedGone = append(indexedGone, p)
			}
			return nil
		})
		for ; i < len(found); i++ {
			look(found[i], fileRec{}, false)
		}
		return err
	})
	return checks, indexedGone, err
}

// ensureLoaded reads the index's mirror from the store once, and again after another node
// wrote it; a damaged index, one of another version or of another embedding model is
// dropped, to be rebuilt from the files.
func (x *Index) ensureLoaded() error {
	if x.m != nil {
		return nil
	}
	var m *mirror
	err := x.store.View(func(r persistence.Reader) error {
		var err error
		m, err = loadMirror(r, x.b)
		return err
	})
	reason := ""
	switch {
	case errors.Is(err, errDamaged):
		reason = err.Error()
	case err != nil:
		return fmt.Errorf("memory: load index: %w", err)
	case m.fresh:
	case m.state.Version != indexVersion:
		reason = fmt.Sprintf("index version %d, this reef writes %d", m.state.Version, indexVersion)
	case m.state.Model != x.cfg.Model:
		reason = fmt.Sprintf("embedding model changed from %q to %q", m.state.Model, x.cfg.Model)
	}
	switch {
	case reason != "":
		x.log.Warn().Str("agent", x.cfg.AgentID).Str("reason", reason).Msg("memory: rebuilding the index")
		x.stats.Rebuilds++
		return x.reset()
	case m.fresh:
		return x.reset()
	}
	x.m = m
	return nil
}

// rebuildDamaged drops an index found damaged after it was loaded. x.mu is held.
func (x *Index) rebuildDamaged(why error) error {
	x.log.Warn().Str("agent", x.cfg.AgentID).Str("reason", why.Error()).Msg("memory: rebuilding the index")
	x.stats.Rebuilds++
	return x.reset()
}

// reset drops the index and starts an empty one. Its generation is new (the time), so
// another node's mirror of the dropped index is seen to be stale. x.mu is held.
func (x *Index) reset() error {
	x.m = nil
	if err := dropAll(x.store, x.b); err != nil {
		return fmt.Errorf("memory: reset index: %w", err)
	}
	st := state{Version: indexVersion, Model: x.cfg.Model, Gen: uint64(x.clock().UnixNano())}
	raw, _ := json.Marshal(st)
	if err := x.store.Update(func(tx persistence.Tx) error { return tx.Put(x.b.meta, "state", raw) }); err != nil {
		return fmt.Errorf("memory: reset index: %w", err)
	}
	x.m, x.sessAt, x.scanned = newMirror(st), time.Time{}, time.Time{}
	return nil
}

// changes reads the files to check and prepares what to write; gone lists the indexed
// files no longer there.
func (x *Index) changes(root *os.Root, checks []toCheck, gone []string) *changeSet {
	ch := newChangeSet()
	ch.removed = gone
	now := x.clock()
	for _, c := range checks {
		f, old, had := c.f, fileRec{}, c.old != nil
		if had {
			old = *c.old
		}
		rec := fileRec{Size: f.size, MTime: f.mtime}
		// A file changed within the last two seconds may change again within the same mtime
		// tick: keep no mtime, so the next sync hashes it again (cheap when nothing changed).
		if now.Sub(time.Unix(0, f.mtime)) < 2*time.Second {
			rec.MTime = 0
		}
		text, skipped, err := readNote(root, f.path, x.cfg.MaxFileBytes)
		if err != nil {
			x.log.Warn().Err(err).Str("path", f.path).Msg("memory: read note")
			x.pending[f.path] = true
			continue // tried again at the next sync
		}
		rec.Skipped = skipped
		if skipped == "" {
			rec.Hash = hashText(text)
		}
		if had && old.Hash == rec.Hash && old.Skipped == rec.Skipped {
			rec.Chunks = old.Chunks
			ch.files[f.path] = rec // only size/mtime change
			continue
		}
		var chunks []Chunk
		if skipped == "" {
			chunks = splitChunks(text, x.cfg.ChunkTokens, x.cfg.OverlapTokens)
		}
		rec.Chunks = len(chunks)
		ch.replace(f.path, rec, chunks)
	}
	return ch
}

func hashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
