package memory

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/reefgw/reef/persistence"
)

// changeSet is what one batch of a sync writes, in one transaction.
type changeSet struct {
	files    map[string]fileRec     // new records of changed files
	replaced map[string][]*chunkRec // the new chunks of files whose content changed
	from     map[string]int         // the first chunk index replaced (0: all; sessions replace their tail)
	removed  []string               // files gone from the workspace
	vectors  map[string][]float32   // new vectors by chunk key
	cache    map[string][]float32   // new embedding cache entries by cache key
	state    *state                 // a new state record (the vectors' dimension became known)
}

func newChangeSet() *changeSet {
	return &changeSet{files: map[string]fileRec{}, replaced: map[string][]*chunkRec{}, from: map[string]int{},
		vectors: map[string][]float32{}, cache: map[string][]float32{}}
}

func (c *changeSet) empty() bool {
	return len(c.files) == 0 && len(c.removed) == 0 && len(c.vectors) == 0 && c.state == nil
}

// replace records a file whose chunks are replaced.
func (c *changeSet) replace(path string, rec fileRec, chunks []Chunk) {
	c.files[path] = rec
	recs := make([]*chunkRec, len(chunks))
	for i, ck := range chunks {
		recs[i] = &chunkRec{Path: path, Start: ck.StartLine, End: ck.EndLine, Hash: hashText(ck.Text), Text: ck.Text}
	}
	c.replaced[path] = recs
}

// replaceFrom records a source whose chunks from index from on are replaced by recs (a
// session's last turn and the turns after it).
func (c *changeSet) replaceFrom(path string, rec fileRec, from int, recs []*chunkRec) {
	c.files[path] = rec
	c.replaced[path] = recs
	c.from[path] = from
}

// replacesKey reports whether the stored chunk key of path is replaced or removed.
func (c *changeSet) replacesKey(path, key string) bool {
	if _, ok := c.replaced[path]; !ok {
		return false
	}
	return chunkIndex(key) >= c.from[path]
}

// terms counts the keyword terms of a text.
func terms(text string) map[string]int {
	m := map[string]int{}
	for _, t := range Tokenize(text) {
		m[t]++
	}
	return m
}

// errStale says the store's index changed since the mirror read it (another node wrote).
var errStale = errors.New("memory: the index changed in the store")

// write stores the changes. What it replaces it reads from tx, and the numbers of the new
// documents it takes among m's free ones; it fails with errStale when the store's index is
// not the one m mirrors. It returns what changed, for m.apply once tx commits.
func (c *changeSet) write(tx persistence.Tx, b buckets, m *mirror) (*written, error) {
	st, ok, err := readState(tx, b)
	switch {
	case err != nil:
		return nil, err
	case !ok || st.Gen != m.state.Gen:
		return nil, errStale
	}
	w := &written{}
	post := postingEdits{}
	drop := func(path string, from int) error {
		old, _, err := readFile(tx, b, path)
		if err != nil {
			return err
		}
		for i := from; i < old.Chunks; i++ {
			k := chunkKey(path, i)
			rec, ok, err := readChunk(tx, b, k)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w: %s: chunk %d missing", errDamaged, path, i)
			}
			for t := range terms(rec.Text) {
				post.remove(t, rec.ID)
			}
			w.freed = append(w.freed, rec.ID)
			for _, del := range [][2]string{{b.chunks, k}, {b.docs, docKey(rec.ID)}, {b.vectors, docKey(rec.ID)}} {
				if err := tx.Delete(del[0], del[1]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, p := range c.removed {
		if err := drop(p, 0); err != nil {
			return nil, err
		}
		if err := tx.Delete(b.files, p); err != nil {
			return nil, err
		}
	}
	n := 0
	for _, recs := range c.replaced {
		n += len(recs)
	}
	free, newIDs := m.freeIDs(n), map[string]uint32{}
	// In key order: bbolt fills its pages best and splits least when keys arrive sorted.
	for _, p := range slices.Sorted(maps.Keys(c.replaced)) {
		recs, from := c.replaced[p], c.from[p]
		if err := drop(p, from); err != nil {
			return nil, err
		}
		for i, r := range recs {
			k := chunkKey(p, from+i)
			r.ID, free = free[0], free[1:]
			newIDs[k] = r.ID
			raw, err := json.Marshal(r)
			if err != nil {
				return nil, err
			}
			if err := tx.Put(b.chunks, k, raw); err != nil {
				return nil, err
			}
			counts := terms(r.Text) // counted here, not held by the change set: a batch's maps were its largest part
			d := docRec{len: termsLen(counts), day: r.day(), vec: c.vectors[k] != nil, key: k}
			if err := tx.Put(b.docs, docKey(r.ID), d.encode()); err != nil {
				return nil, err
			}
			for t, tf := range counts {
				post.add(t, r.ID, uint32(tf))
			}
			w.added = append(w.added, docLen{id: r.ID, len: d.len})
		}
	}
	if err := post.write(tx, b); err != nil {
		return nil, err
	}
	for _, p := range slices.Sorted(maps.Keys(c.files)) {
		raw, err := json.Marshal(c.files[p])
		if err != nil {
			return nil, err
		}
		if err := tx.Put(b.files, p, raw); err != nil {
			return nil, err
		}
	}
	if err := c.writeVectors(tx, b, newIDs, w); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(c.cache)) {
		if err := tx.Put(b.cache, k, encodeVector(c.cache[k])); err != nil {
			return nil, err
		}
	}
	if c.state != nil {
		st.Model, st.Dims = c.state.Model, c.state.Dims
	}
	st.Gen++
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	w.state = st
	return w, tx.Put(b.meta, "state", raw)
}

// writeVectors stores the new vectors under their documents' numbers: those of the chunks
// written with them (newIDs), else those of the stored chunks, whose records are marked.
func (c *changeSet) writeVectors(tx persistence.Tx, b buckets, newIDs map[string]uint32, w *written) error {
	ids := make(map[uint32][]float32, len(c.vectors))
	for k, v := range c.vectors {
		id, isNew := newIDs[k]
		if !isNew {
			rec, ok, err := readChunk(tx, b, k)
			if err != nil {
				return err
			}
			if !ok {
				continue // removed since it was embedded
			}
			id = rec.ID
			raw, ok, err := tx.Get(b.docs, docKey(id))
			if err != nil || !ok {
				return cmp.Or(err, fmt.Errorf("%w: document %d missing", errDamaged, id))
			}
			d, err := decodeDoc(raw)
			if err != nil {
				return err
			}
			d.vec = true
			if err := tx.Put(b.docs, docKey(id), d.encode()); err != nil {
				return err
			}
		}
		ids[id] = v
		w.vecs = append(w.vecs, id)
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		if err := tx.Put(b.vectors, docKey(id), encodeVector(ids[id])); err != nil {
			return err
		}
	}
	return nil
}
