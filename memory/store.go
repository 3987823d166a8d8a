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
// is rebuilt. Version 2 keeps the postings and the documents in the store (post, docs).
const indexVersion = 2

// state is the index's meta record.
type state struct {
	Version int    `json:"version"`
	Model   string `json:"model,omitempty"` // embedding model of the vectors; "" = none
	Dims    int    `json:"dims,omitempty"`
	// Gen counts the writes to the index. A write checks that the store's Gen is the one its
	// mirror read, so a write by another node (cluster mode, one database) is never mixed
	// with a stale mirror: the mirror is read again first.
	Gen uint64 `json:"gen,omitempty"`
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
	ID    uint32 `json:"id"` // its document number: its key in docs, vectors and the postings
	Path  string `json:"path"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Hash  string `json:"hash"`
	Text  string `json:"text"`
	Turn  int    `json:"turn,omitempty"` // a session chunk: the turn's number in the session
	Time  int64  `json:"time,omitempty"` // a session chunk: when the turn began, unix seconds
}

// termsLen is a chunk's length in terms, as BM25 counts it.
func termsLen(counts map[string]int) uint32 {
	n := 0
	for _, tf := range counts {
		n += tf
	}
	return uint32(n)
}

// day is what breaks ties between equal scores, the newer first: a conversation's time, a
// daily note's date, else the zero time.
func (c *chunkRec) day() int64 {
	if c.Time != 0 {
		return c.Time
	}
	return noteDay(c.Path).Unix()
}

// errDamaged marks an index that must be rebuilt.
var errDamaged = errors.New("memory: index damaged")

// buckets names one agent's buckets.
type buckets struct{ meta, files, chunks, docs, post, vectors, cache string }

func bucketsFor(agentID string) buckets {
	b := "memory/" + agentID + "/"
	return buckets{meta: b + "meta", files: b + "files", chunks: b + "chunks", docs: b + "docs", post: b + "post",
		vectors: b + "vectors", cache: b + "embcache"}
}

// index returns the buckets of the index, the embedding cache not included.
func (b buckets) index() []string {
	return []string{b.meta, b.files, b.chunks, b.docs, b.post, b.vectors}
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

// readState reads the index's meta record; ok is false when there is none (never indexed).
func readState(r persistence.Reader, b buckets) (st state, ok bool, err error) {
	raw, ok, err := r.Get(b.meta, "state")
	if err != nil || !ok {
		return st, false, err
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, false, fmt.Errorf("%w: state: %v", errDamaged, err)
	}
	return st, true, nil
}

// readFile reads the record of one indexed file.
func readFile(r persistence.Reader, b buckets, path string) (fileRec, bool, error) {
	var f fileRec
	raw, ok, err := r.Get(b.files, path)
	if err != nil || !ok {
		return f, false, err
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, false, fmt.Errorf("%w: file %s: %v", errDamaged, path, err)
	}
	return f, true, nil
}

// readChunk reads a stored chunk; ok is false when it is not there.
func readChunk(r persistence.Reader, b buckets, key string) (*chunkRec, bool, error) {
	raw, ok, err := r.Get(b.chunks, key)
	if err != nil || !ok {
		return nil, false, err
	}
	c := &chunkRec{}
	if err := json.Unmarshal(raw, c); err != nil || c.Path == "" || !strings.HasPrefix(key, c.Path+"\x00") {
		return nil, false, fmt.Errorf("%w: chunk %q", errDamaged, key)
	}
	return c, true, nil
}

// dropBatch is how many records one transaction of dropAll deletes.
const dropBatch = 2048

// dropAll deletes every record of an agent's index (not the embedding cache: it is keyed
// by content and model, so it stays valid), in transactions of dropBatch records, the state
// record first: an index without one is rebuilt from nothing, so a drop stopped midway is
// taken up again by the next start. One transaction for all of a large index would hold
// every page it changes in memory.
func dropAll(s persistence.Store, b buckets) error {
	if err := s.Update(func(tx persistence.Tx) error { return tx.Delete(b.meta, "state") }); err != nil {
		return err
	}
	for _, bucket := range b.index() {
		for {
			var keys []string
			err := s.View(func(r persistence.Reader) error {
				return r.Scan(bucket, "", func(k string, _ []byte) error {
					if len(keys) == dropBatch {
						return errEnough
					}
					keys = append(keys, k)
					return nil
				})
			})
			if err != nil && !errors.Is(err, errEnough) {
				return err
			}
			if len(keys) == 0 {
				break
			}
			err = s.Update(func(tx persistence.Tx) error {
				for _, k := range keys {
					if err := tx.Delete(bucket, k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// errEnough stops a Scan that has read what it needs.
var errEnough = errors.New("enough")
