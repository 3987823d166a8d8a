package memory

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/reefgw/reef/persistence"
)

// indexVersion changes when the records or the tokenizer change: an index of another version
// is rebuilt.
const indexVersion = 1

// state is the index's meta record.
type state struct {
	Version int    `json:"version"`
	Model   string `json:"model,omitempty"` // embedding model of the vectors; "" = none
	Dims    int    `json:"dims,omitempty"`
}

// fileRec is what was indexed of one file.
type fileRec struct {
	Size   int64  `json:"size"`
	MTime  int64  `json:"mtime"` // unix nanoseconds
	Hash   string `json:"hash"`
	Chunks int    `json:"chunks"`
	// Skipped says why the file is not indexed (too large, binary); it is not read again
	// until its size or mtime change.
	Skipped string `json:"skipped,omitempty"`
	// A session transcript (path sessions/<key>) keeps, with MTime its info's last update:
	// the last message indexed, and where its last turn starts (message, chunk, turn number),
	// the turn a later message may still add to, so it is indexed again with the turns after it.
	Seq       uint64 `json:"seq,omitempty"`
	TailSeq   uint64 `json:"tailSeq,omitempty"`
	TailChunk int    `json:"tailChunk,omitempty"`
	TailTurn  int    `json:"tailTurn,omitempty"`
}

// chunkRec is one stored chunk.
type chunkRec struct {
	Path  string         `json:"path"`
	Start int            `json:"start"`
	End   int            `json:"end"`
	Hash  string         `json:"hash"`
	Text  string         `json:"text"`
	Terms map[string]int `json:"terms"`
	Turn  int            `json:"turn,omitempty"` // a session chunk: the turn's number in the session
	Time  int64          `json:"time,omitempty"` // a session chunk: when the turn began, unix seconds
}

// errDamaged marks an index that must be rebuilt.
var errDamaged = errors.New("memory: index damaged")

// buckets names one agent's buckets.
type buckets struct{ meta, files, chunks, vectors, cache string }

func bucketsFor(agentID string) buckets {
	b := "memory/" + agentID + "/"
	return buckets{meta: b + "meta", files: b + "files", chunks: b + "chunks", vectors: b + "vectors", cache: b + "embcache"}
}

func chunkKey(path string, i int) string { return fmt.Sprintf("%s\x00%06d", path, i) }

// chunkIndex is the chunk number in a chunk key (-1 when the key has none).
func chunkIndex(key string) int {
	i := strings.LastIndexByte(key, 0)
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(key[i+1:])
	if err != nil {
		return -1
	}
	return n
}

func cacheKey(model, hash string) string { return model + "\x00" + hash }

// encodeVector stores a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: vector of %d bytes", errDamaged, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// chunkMeta is what the index keeps of a chunk in memory: no text (read from the store for
// the results shown) and its terms as ids of the index's dictionary.
type chunkMeta struct {
	Path       string
	Start, End int
	Hash       string
	Turn       int   // a session chunk's turn
	Time       int64 // a session chunk's time, unix seconds
	terms      []termFreq
}

type termFreq struct{ id, tf uint32 }

// dictionary numbers the terms of an index.
type dictionary map[string]uint32

func (d dictionary) id(t string) uint32 {
	id, ok := d[t]
	if !ok {
		id = uint32(len(d))
		d[t] = id
	}
	return id
}

// meta turns a stored chunk into its in-memory form.
func (c *chunkRec) meta(d dictionary) *chunkMeta {
	m := &chunkMeta{Path: c.Path, Start: c.Start, End: c.End, Hash: c.Hash, Turn: c.Turn, Time: c.Time, terms: make([]termFreq, 0, len(c.Terms))}
	for t, tf := range c.Terms {
		m.terms = append(m.terms, termFreq{id: d.id(t), tf: uint32(tf)})
	}
	return m
}

// loaded is the index of one agent as the store holds it, without texts and vectors.
type loaded struct {
	state  state
	fresh  bool // no state record: never indexed
	files  map[string]fileRec
	chunks map[string]*chunkMeta
	hasVec map[string]bool // chunks with a vector in the store
	dict   dictionary
}

func newLoaded(st state) *loaded {
	return &loaded{state: st, files: map[string]fileRec{}, chunks: map[string]*chunkMeta{}, hasVec: map[string]bool{}, dict: dictionary{}}
}

// load reads an agent's index; a record that does not decode, or a chunk a file record
// names that is missing, is reported as errDamaged.
func load(r persistence.Reader, b buckets) (*loaded, error) {
	l := newLoaded(state{})
	raw, ok, err := r.Get(b.meta, "state")
	if err != nil {
		return nil, err
	}
	if !ok {
		l.fresh = true
		return l, nil
	}
	if err := json.Unmarshal(raw, &l.state); err != nil {
		return nil, fmt.Errorf("%w: state: %v", errDamaged, err)
	}
	err = r.Scan(b.files, "", func(k string, v []byte) error {
		var f fileRec
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("%w: file %s: %v", errDamaged, k, err)
		}
		l.files[k] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = r.Scan(b.chunks, "", func(k string, v []byte) error {
		c := &chunkRec{}
		if err := json.Unmarshal(v, c); err != nil || c.Path == "" || !strings.HasPrefix(k, c.Path+"\x00") {
			return fmt.Errorf("%w: chunk %q", errDamaged, k)
		}
		l.chunks[k] = c.meta(l.dict)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = r.Scan(b.vectors, "", func(k string, v []byte) error {
		if len(v) != 4*l.state.Dims || len(v) == 0 || l.chunks[k] == nil {
			return fmt.Errorf("%w: vector %q", errDamaged, k)
		}
		l.hasVec[k] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	for path, f := range l.files {
		for i := range f.Chunks {
			if l.chunks[chunkKey(path, i)] == nil {
				return nil, fmt.Errorf("%w: %s: chunk %d missing", errDamaged, path, i)
			}
		}
	}
	if want := countChunks(l.files); want != len(l.chunks) {
		return nil, fmt.Errorf("%w: %d chunks stored, files name %d", errDamaged, len(l.chunks), want)
	}
	return l, nil
}

// chunkText reads the text of a stored chunk ("" when it is gone).
func chunkText(r persistence.Reader, b buckets, key string) (string, error) {
	raw, ok, err := r.Get(b.chunks, key)
	if err != nil || !ok {
		return "", err
	}
	var c chunkRec
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", fmt.Errorf("%w: chunk %q", errDamaged, key)
	}
	return c.Text, nil
}

func countChunks(files map[string]fileRec) int {
	n := 0
	for _, f := range files {
		n += f.Chunks
	}
	return n
}

// dropAll deletes every record of an agent's index (not the embedding cache: it is keyed
// by content and model, so it stays valid).
func dropAll(tx persistence.Tx, b buckets) error {
	for _, bucket := range []string{b.meta, b.files, b.chunks, b.vectors} {
		var keys []string
		if err := tx.Scan(bucket, "", func(k string, _ []byte) error { keys = append(keys, k); return nil }); err != nil {
			return err
		}
		for _, k := range keys {
			if err := tx.Delete(bucket, k); err != nil {
				return err
			}
		}
	}
	return nil
}
