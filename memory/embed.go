package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/reefgw/reef/persistence"
)

// errDims reports vectors of a dimension other than the index's.
var errDims = errors.New("embeddings of the wrong dimension")

// embedMissing adds to ch a vector for every chunk that will lack one: from the embedding
// cache where the same text was embedded before with this model, else from the embedder in
// batches. A failed call leaves the rest without vectors (keyword search still finds them),
// and embedding is not tried again for cfg.RetryAfter.
func (x *Index) embedMissing(ctx context.Context, ch *changeSet) {
	if x.cfg.Embedder == nil || x.clock().Before(x.embedOK) {
		return
	}
	if len(ch.replaced) == 0 && !x.m.vectorsMissing() {
		return // every chunk has its vector: no walk over them each search
	}
	byHash := map[string][]string{} // content hash → chunk keys
	texts := map[string]string{}    // content hash → text, for new chunks
	if err := x.staleChunks(ch, byHash); err != nil {
		x.log.Warn().Err(err).Msg("memory: read chunks to embed")
		return
	}
	for p, recs := range ch.replaced {
		for i, r := range recs {
			byHash[r.Hash] = append(byHash[r.Hash], chunkKey(p, ch.from[p]+i))
			texts[r.Hash] = r.Text
		}
	}
	if len(byHash) == 0 {
		return
	}
	dims := x.m.state.Dims
	x.fromCache(byHash, dims, ch)
	var hashes []string
	for h := range byHash {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes) // deterministic batches
	for len(hashes) > 0 {
		batch := hashes[:min(len(hashes), x.cfg.BatchSize)]
		hashes = hashes[len(batch):]
		input, err := x.inputs(batch, byHash, texts)
		if err != nil {
			x.log.Warn().Err(err).Msg("memory: read chunks to embed")
			return
		}
		vecs, err := x.embed(ctx, input, x.cfg.IndexTimeout, dims)
		x.stats.EmbedCalls++
		x.stats.Embedded += len(input)
		if err != nil {
			x.embedFailed(err)
			return
		}
		if dims == 0 {
			dims = len(vecs[0])
			ch.state = &state{Version: indexVersion, Model: x.cfg.Model, Dims: dims}
		}
		for i, h := range batch {
			ch.cache[cacheKey(x.cfg.Model, h)] = vecs[i]
			for _, k := range byHash[h] {
				ch.vectors[k] = vecs[i]
			}
		}
	}
}

// staleChunks adds to byHash the stored chunks without a vector that ch keeps.
func (x *Index) staleChunks(ch *changeSet, byHash map[string][]string) error {
	if !x.m.vectorsMissing() {
		return nil
	}
	gone := map[string]bool{}
	for _, p := range ch.removed {
		gone[p] = true
	}
	return x.store.View(func(r persistence.Reader) error {
		for id := range x.m.dl {
			if !x.m.has(uint32(id)) || x.m.hasVec(uint32(id)) {
				continue
			}
			raw, ok, err := r.Get(x.b.docs, docKey(uint32(id)))
			if err != nil || !ok {
				return cmp.Or(err, fmt.Errorf("%w: document %d missing", errDamaged, id))
			}
			d, err := decodeDoc(raw)
			if err != nil {
				return err
			}
			path := d.key[:max(0, strings.LastIndexByte(d.key, 0))]
			if ch.replacesKey(path, d.key) || gone[path] {
				continue
			}
			c, ok, err := readChunk(r, x.b, d.key)
			if err != nil || !ok {
				return cmp.Or(err, fmt.Errorf("%w: chunk %q missing", errDamaged, d.key))
			}
			byHash[c.Hash] = append(byHash[c.Hash], d.key)
		}
		return nil
	})
}

// inputs returns the texts of a batch of hashes: the new chunks' from texts, the stored
// ones' read from the store (a batch at a time, so they are never all in memory).
func (x *Index) inputs(batch []string, byHash map[string][]string, texts map[string]string) ([]string, error) {
	input := make([]string, len(batch))
	err := x.store.View(func(r persistence.Reader) error {
		for i, h := range batch {
			if t, ok := texts[h]; ok {
				input[i] = t
				continue
			}
			c, ok, err := readChunk(r, x.b, byHash[h][0])
			if err != nil || !ok {
				return cmp.Or(err, fmt.Errorf("%w: chunk %q missing", errDamaged, byHash[h][0]))
			}
			input[i] = c.Text
		}
		return nil
	})
	return input, err
}

// fromCache moves the chunks whose text is in the embedding cache from byHash to ch.
func (x *Index) fromCache(byHash map[string][]string, dims int, ch *changeSet) {
	err := x.store.View(func(r persistence.Reader) error {
		for h, keys := range byHash {
			raw, ok, err := r.Get(x.b.cache, cacheKey(x.cfg.Model, h))
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			v, err := decodeVector(raw)
			if err != nil || len(v) == 0 || dims != 0 && len(v) != dims {
				continue // a bad entry is embedded again and overwritten
			}
			if dims == 0 {
				dims = len(v)
				ch.state = &state{Version: indexVersion, Model: x.cfg.Model, Dims: dims}
			}
			for _, k := range keys {
				ch.vectors[k] = v
			}
			x.stats.CacheHits++
			delete(byHash, h)
		}
		return nil
	})
	if err != nil {
		x.log.Warn().Err(err).Msg("memory: read embedding cache")
	}
}

// embed calls the embedder under a timeout and checks its answer: one vector per input, all
// of dims dimensions (any, when dims is 0), normalised to unit length.
func (x *Index) embed(ctx context.Context, input []string, timeout time.Duration, dims int) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vecs, err := x.cfg.Embedder.Embed(ctx, x.cfg.Model, input)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embeddings timed out after %s", timeout)
		}
		return nil, err
	}
	if len(vecs) != len(input) {
		return nil, fmt.Errorf("embeddings: %d vectors for %d inputs", len(vecs), len(input))
	}
	want := dims
	for _, v := range vecs {
		if want == 0 {
			want = len(v)
		}
		if len(v) != want || len(v) == 0 {
			return nil, fmt.Errorf("%w: got %d, the index has %d", errDims, len(v), want)
		}
		normalize(v)
	}
	return vecs, nil
}

func (x *Index) embedFailed(err error) {
	x.embedOK = x.clock().Add(x.cfg.RetryAfter)
	x.embedWhy = err.Error()
	x.log.Warn().Err(err).Str("agent", x.cfg.AgentID).Msg("memory: embeddings failed; keyword search only for now")
}

func normalize(v []float32) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return
	}
	n := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= n
	}
}
