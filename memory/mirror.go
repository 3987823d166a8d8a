package memory

import (
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/reefgw/reef/persistence"
)

// mirror is all the index keeps in memory of what the store holds: per document number,
// its length (BM25 needs every matched document's) and whether it has a vector, and their
// totals. About five bytes a chunk; the postings, texts and records stay in the store.
type mirror struct {
	state state
	fresh bool     // no state record: never indexed
	dl    []uint32 // document number → 1 + its length in terms; 0: no document
	vec   []uint64 // bit per document number: it has a vector
	live  int      // documents
	nvec  int      // documents with a vector
	total uint64   // their lengths' sum
	hint  int      // no number below it is free
}

func newMirror(st state) *mirror { return &mirror{state: st} }

// loadMirror reads the index's state and documents. An index of another version is
// returned with its state only (it is rebuilt); a document record that does not decode, or
// a count of documents other than the chunks the files name and the chunks stored, is
// errDamaged.
func loadMirror(r persistence.Reader, b buckets) (*mirror, error) {
	st, ok, err := readState(r, b)
	if err != nil {
		return nil, err
	}
	m := newMirror(st)
	if !ok {
		m.fresh = true
		return m, nil
	}
	if st.Version != indexVersion {
		return m, nil
	}
	err = r.Scan(b.docs, "", func(k string, v []byte) error {
		id, ok := docID(k)
		d, err := decodeDoc(v)
		if !ok || err != nil || id >= 1<<28 {
			return fmt.Errorf("%w: document %q", errDamaged, k)
		}
		m.set(id, d.len, d.vec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	named, stored := 0, 0
	err = r.Scan(b.files, "", func(k string, v []byte) error {
		var f struct{ Chunks int }
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("%w: file %s: %v", errDamaged, k, err)
		}
		named += f.Chunks
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := r.Scan(b.chunks, "", func(string, []byte) error { stored++; return nil }); err != nil {
		return nil, err
	}
	if named != m.live || stored != m.live {
		return nil, fmt.Errorf("%w: %d documents, %d chunks stored, files name %d", errDamaged, m.live, stored, named)
	}
	m.hint = 0
	m.skipTaken()
	return m, nil
}

// has reports whether document number id exists.
func (m *mirror) has(id uint32) bool { return int(id) < len(m.dl) && m.dl[id] != 0 }

// hasVec reports whether document id has a vector.
func (m *mirror) hasVec(id uint32) bool {
	return int(id)/64 < len(m.vec) && m.vec[id/64]&(1<<(id%64)) != 0
}

// set records document id with its length and vector.
func (m *mirror) set(id, length uint32, vec bool) {
	m.unset(id)
	for int(id) >= len(m.dl) {
		m.dl = append(m.dl, 0)
	}
	for int(id)/64 >= len(m.vec) {
		m.vec = append(m.vec, 0)
	}
	m.dl[id] = length + 1
	m.live++
	m.total += uint64(length)
	if vec {
		m.vec[id/64] |= 1 << (id % 64)
		m.nvec++
	}
}

// unset forgets document id.
func (m *mirror) unset(id uint32) {
	if !m.has(id) {
		return
	}
	m.live--
	m.total -= uint64(m.dl[id] - 1)
	m.dl[id] = 0
	if m.hasVec(id) {
		m.vec[id/64] &^= 1 << (id % 64)
		m.nvec--
	}
	m.hint = min(m.hint, int(id))
}

func (m *mirror) skipTaken() {
	for m.hint < len(m.dl) && m.dl[m.hint] != 0 {
		m.hint++
	}
}

// freeIDs returns the n lowest numbers no document has, without taking them.
func (m *mirror) freeIDs(n int) []uint32 {
	out := make([]uint32, 0, n)
	for i := m.hint; len(out) < n; i++ {
		if i >= len(m.dl) || m.dl[i] == 0 {
			out = append(out, uint32(i))
		}
	}
	return out
}

// vectorsMissing reports whether some document has no vector.
func (m *mirror) vectorsMissing() bool { return m.nvec < m.live }

// vectors counts the documents with a vector (a check of nvec in tests).
func (m *mirror) vectors() int {
	n := 0
	for _, w := range m.vec {
		n += bits.OnesCount64(w)
	}
	return n
}

// written is what one write changed, to bring the mirror in step after it commits.
type written struct {
	freed []uint32
	added []docLen
	vecs  []uint32 // documents that got a vector
	state state
}

type docLen struct{ id, len uint32 }

// apply makes m what the store holds after the write w.
func (m *mirror) apply(w *written) {
	for _, id := range w.freed {
		m.unset(id)
	}
	for _, d := range w.added {
		m.set(d.id, d.len, false)
	}
	for _, id := range w.vecs {
		if m.has(id) && !m.hasVec(id) {
			m.vec[id/64] |= 1 << (id % 64)
			m.nvec++
		}
	}
	m.state, m.fresh = w.state, false
	m.skipTaken()
}

// avgLen is the documents' average length.
func (m *mirror) avgLen() float64 {
	if m.live == 0 {
		return 0
	}
	return float64(m.total) / float64(m.live)
}
