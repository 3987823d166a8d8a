package memory

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/reefgw/reef/persistence"
)

// fuse turns the keyword scores into each document's final score, in place: the fused
// score for a document with a vector, 0 for no document and for a score under minScore.
func (x *Index) fuse(terms []string, text []float64, vec []float32, minScore float64) []float64 {
	for i, dl := range x.m.dl {
		if dl == 0 {
			text[i] = 0
			continue
		}
		score := text[i]
		if vec != nil && x.m.hasVec(uint32(i)) {
			v := max(0, float64(vec[i]))
			score = vectorWeight*v + textWeight*score
			if len(terms) == 0 {
				score = v
			}
		}
		if score < minScore {
			score = 0
		}
		text[i] = score
	}
	return text
}

// scoreKey is a score to three decimals: what ranks, and what results show.
func scoreKey(score float64) int64 { return int64(math.Round(score * 1000)) }

// ranked is a document that ranks, by score, then the newer daily note (recency breaks
// ties), then chunk key (path and number).
type ranked struct {
	key   int64 // its score's
	day   int64
	chunk string
}

// topN keeps the best n documents offered, best first.
type topN struct {
	n    int
	hits []ranked
}

// offer adds a document if it is among the best n so far; chunk is copied only then.
func (t *topN) offer(key, day int64, chunk []byte) {
	h := ranked{key: key, day: day}
	beats := func(o ranked) bool { // h better than o, without copying chunk
		if h.key != o.key {
			return h.key > o.key
		}
		if h.day != o.day {
			return h.day > o.day
		}
		return string(chunk) < o.chunk
	}
	if len(t.hits) == t.n && !beats(t.hits[t.n-1]) {
		return
	}
	at := len(t.hits)
	for at > 0 && beats(t.hits[at-1]) {
		at--
	}
	h.chunk = string(chunk)
	if len(t.hits) < t.n {
		t.hits = append(t.hits, ranked{})
	}
	copy(t.hits[at+1:], t.hits[at:])
	t.hits[at] = h
}

// best returns the best n documents by score that only accepts (nil: all). The records of
// the documents read are those scoring at least the n-th best score (all that scored, with
// only), one by one when they are few, else in one pass over the documents; no key is
// copied but the n kept.
func (x *Index) best(r persistence.Reader, scores []float64, n int, only func(string) bool) (*topN, error) {
	least := int64(math.MinInt64)
	if only == nil {
		least = nthKey(scores, n)
	}
	var ids []uint32
	for i, s := range scores {
		if s > 0 && scoreKey(s) >= least {
			ids = append(ids, uint32(i))
		}
	}
	top := &topN{n: n}
	offer := func(id uint32, v []byte) error {
		day, chunk, err := docTieBreak(v)
		if err != nil {
			return err
		}
		if only != nil && !only(string(chunk[:bytes.LastIndexByte(chunk, 0)])) {
			return nil
		}
		top.offer(scoreKey(scores[id]), day, chunk)
		return nil
	}
	if len(ids) <= 64 {
		for _, id := range ids {
			v, ok, err := r.Get(x.b.docs, docKey(id))
			if err != nil || !ok {
				return nil, cmp.Or(err, fmt.Errorf("%w: document %d missing", errDamaged, id))
			}
			if err := offer(id, v); err != nil {
				return nil, err
			}
		}
		return top, nil
	}
	j := 0
	err := r.Scan(x.b.docs, "", func(k string, v []byte) error {
		if id, _ := docID(k); j == len(ids) || id != ids[j] {
			return nil
		}
		j++
		return offer(ids[j-1], v)
	})
	if err == nil && j != len(ids) {
		err = fmt.Errorf("%w: %d documents missing", errDamaged, len(ids)-j)
	}
	return top, err
}

// docTieBreak reads a document record's day and chunk key without copying them.
func docTieBreak(b []byte) (day int64, chunk []byte, err error) {
	_, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, fmt.Errorf("%w: document record", errDamaged)
	}
	day, k2 := binary.Varint(b[k:])
	if k2 <= 0 || len(b) < k+k2+2 || bytes.IndexByte(b[k+k2+1:], 0) <= 0 {
		return 0, nil, fmt.Errorf("%w: document record", errDamaged)
	}
	return day, b[k+k2+1:], nil
}

// nthKey returns the n-th highest score key among the positive scores (the lowest there is
// when fewer score), with a min-heap of the n highest so far.
func nthKey(scores []float64, n int) int64 {
	h := make([]int64, 0, n)
	for _, s := range scores {
		if s <= 0 {
			continue
		}
		key := scoreKey(s)
		switch {
		case len(h) < n:
			h = append(h, key)
			for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case key > h[0]:
			h[0] = key
			for i := 0; ; {
				c := 2*i + 1
				if c >= n {
					break
				}
				if c+1 < n && h[c+1] < h[c] {
					c++
				}
				if h[i] <= h[c] {
					break
				}
				h[i], h[c] = h[c], h[i]
				i = c
			}
		}
	}
	if len(h) < n {
		return math.MinInt64
	}
	return h[0]
}
