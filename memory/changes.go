package memory

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/reefgw/reef/persistence"
)

// changeSet is what one sync writes, in one transaction.
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
		recs[i] = &chunkRec{Path: path, Start: ck.StartLine, End: ck.EndLine, Hash: hashText(ck.Text), Text: ck.Text, Terms: terms(ck.Text)}
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

// write stores the changes; cur is the index before them.
func (c *changeSet) write(tx persistence.Tx, b buckets, cur *loaded) error {
	drop := func(path string, from int) error {
		for i := from; i < cur.files[path].Chunks; i++ {
			k := chunkKey(path, i)
			if err := tx.Delete(b.chunks, k); err != nil {
				return err
			}
			if err := tx.Delete(b.vectors, k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range c.removed {
		if err := drop(p, 0); err != nil {
			return err
		}
		if err := tx.Delete(b.files, p); err != nil {
			return err
		}
	}
	// In key order: bbolt fills its pages best and splits least when keys arrive sorted.
	for _, p := range slices.Sorted(maps.Keys(c.replaced)) {
		recs, from := c.replaced[p], c.from[p]
		if err := drop(p, from); err != nil {
			return err
		}
		for i, r := range recs {
			raw, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if err := tx.Put(b.chunks, chunkKey(p, from+i), raw); err != nil {
				return err
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(c.files)) {
		raw, err := json.Marshal(c.files[p])
		if err != nil {
			return err
		}
		if err := tx.Put(b.files, p, raw); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.vectors)) {
		if err := tx.Put(b.vectors, k, encodeVector(c.vectors[k])); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.cache)) {
		if err := tx.Put(b.cache, k, encodeVector(c.cache[k])); err != nil {
			return err
		}
	}
	if c.state != nil {
		raw, err := json.Marshal(c.state)
		if err != nil {
			return err
		}
		return tx.Put(b.meta, "state", raw)
	}
	return nil
}

// apply makes cur what the store holds after write.
func (c *changeSet) apply(cur *loaded) {
	drop := func(path string, from int) {
		for i := from; i < cur.files[path].Chunks; i++ {
			k := chunkKey(path, i)
			delete(cur.chunks, k)
			delete(cur.hasVec, k)
		}
	}
	for _, p := range c.removed {
		drop(p, 0)
		delete(cur.files, p)
	}
	for p, recs := range c.replaced {
		from := c.from[p]
		drop(p, from)
		for i, r := range recs {
			cur.chunks[chunkKey(p, from+i)] = r.meta(cur.dict)
		}
	}
	for p, rec := range c.files {
		cur.files[p] = rec
	}
	for k := range c.vectors {
		cur.hasVec[k] = true
	}
	if c.state != nil {
		cur.state = *c.state
	}
}
