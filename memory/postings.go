package memory

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reefgw/reef/persistence"
)

// The keyword index in the store, read where it lies (bbolt maps its file: a read in a View
// is a slice of the map, page cache and not the process's heap) and decoded a term at a time:
//
//	docs  id (4 bytes, big-endian) → uvarint length | varint day | flags | chunk key
//	post  block (4 bytes, big-endian) term → (uvarint id delta, uvarint tf)...
//
// A document is a chunk, numbered when it is written with the lowest number no document
// has (numbers are reused, so they stay about as many as the chunks). A term's postings are
// cut in blocks of postBlock document numbers, the block first in the key: a write
// rewrites only the blocks of the documents it adds or removes, and new documents, which
// take the highest numbers when none is free, touch only the last block's pages (a key
// per term and block spread over the whole bucket made every batch of a build rewrite
// every page of the postings).

// postBlock is how many document numbers one postings record covers.
const postBlock = 1024

func docKey(id uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], id)
	return string(b[:])
}

func docID(key string) (uint32, bool) {
	if len(key) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32([]byte(key)), true
}

// docRec is what the index keeps of a document for ranking: its length for BM25, its day
// and chunk key to break ties, whether it has a vector.
type docRec struct {
	len uint32
	day int64 // unix seconds
	vec bool
	key string // the chunk's key: path\x00nnnnnn
}

func (d docRec) encode() []byte {
	b := make([]byte, 0, 2*binary.MaxVarintLen64+1+len(d.key))
	b = binary.AppendUvarint(b, uint64(d.len))
	b = binary.AppendVarint(b, d.day)
	flags := byte(0)
	if d.vec {
		flags = 1
	}
	return append(append(b, flags), d.key...)
}

func decodeDoc(b []byte) (docRec, error) {
	var d docRec
	n, k := binary.Uvarint(b)
	if k <= 0 || n > 1<<31 {
		return d, fmt.Errorf("%w: document record", errDamaged)
	}
	b = b[k:]
	day, k := binary.Varint(b)
	if k <= 0 || len(b) < k+2 || b[k] > 1 {
		return d, fmt.Errorf("%w: document record", errDamaged)
	}
	d.len, d.day, d.vec, d.key = uint32(n), day, b[k] == 1, string(b[k+1:])
	if strings.IndexByte(d.key, 0) <= 0 {
		return d, fmt.Errorf("%w: document record of %q", errDamaged, d.key)
	}
	return d, nil
}

func postKey(term string, block uint32) string { return docKey(block) + term }

// posting is one document of a term's postings.
type posting struct{ doc, tf uint32 }

// postings is one stored block of a term's postings.
type postings struct {
	key string
	b   []byte
}

// count is how many postings the block holds: every uvarint ends with a byte under 0x80,
// and a posting is two.
func (p postings) count() int {
	n := 0
	for _, c := range p.b {
		if c < 0x80 {
			n++
		}
	}
	return n / 2
}

// each calls fn for every posting of the block, in document order.
func (p postings) each(fn func(doc, tf uint32) error) error {
	block, ok := docID(p.key[:min(len(p.key), 4)])
	if !ok || len(p.key) < 5 {
		return fmt.Errorf("%w: postings %q", errDamaged, p.key)
	}
	id, end := uint64(block)*postBlock, (uint64(block)+1)*postBlock
	for b := p.b; len(b) > 0; {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("%w: postings %q", errDamaged, p.key)
		}
		tf, k2 := binary.Uvarint(b[k:])
		if k2 <= 0 || tf == 0 || tf > 1<<31 {
			return fmt.Errorf("%w: postings %q", errDamaged, p.key)
		}
		b = b[k+k2:]
		if id += d; id >= end {
			return fmt.Errorf("%w: postings %q", errDamaged, p.key)
		}
		if err := fn(uint32(id), uint32(tf)); err != nil {
			return err
		}
	}
	return nil
}

// decodeBlock appends the postings of a stored block to out.
func decodeBlock(out []posting, key string, b []byte) ([]posting, error) {
	err := postings{key: key, b: b}.each(func(doc, tf uint32) error {
		out = append(out, posting{doc: doc, tf: tf})
		return nil
	})
	return out, err
}

// encodeBlock encodes the postings of one block, in document order.
func encodeBlock(block uint32, ps []posting) []byte {
	b := make([]byte, 0, 3*len(ps))
	prev := block * postBlock
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.doc-prev))
		b = binary.AppendUvarint(b, uint64(p.tf))
		prev = p.doc
	}
	return b
}

// readPostings appends every stored block of a term's postings to out, for the documents
// numbered below ndocs. (bbolt's Get copies the value: a block is at most a few KB.)
func readPostings(r persistence.Reader, b buckets, term string, ndocs int, out []postings) ([]postings, error) {
	for block := range uint32((ndocs + postBlock - 1) / postBlock) {
		k := postKey(term, block)
		v, ok, err := r.Get(b.post, k)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, postings{key: k, b: v})
		}
	}
	return out, nil
}

// postingEdits collects a write's changes to the postings, block by block, to rewrite each
// block once.
type postingEdits map[string]*blockEdit // by postings key

type blockEdit struct {
	term   string
	block  uint32
	remove map[uint32]bool
	add    []posting
}

func (e postingEdits) edit(term string, id uint32) *blockEdit {
	block := id / postBlock
	k := postKey(term, block)
	be := e[k]
	if be == nil {
		be = &blockEdit{term: term, block: block}
		e[k] = be
	}
	return be
}

func (e postingEdits) remove(term string, id uint32) {
	be := e.edit(term, id)
	if be.remove == nil {
		be.remove = map[uint32]bool{}
	}
	be.remove[id] = true
}

func (e postingEdits) add(term string, id, tf uint32) {
	be := e.edit(term, id)
	be.add = append(be.add, posting{doc: id, tf: tf})
}

// write rewrites every block edited, in key order: the removed documents out, the added in.
func (e postingEdits) write(tx persistence.Tx, b buckets) error {
	keys := slices.Sorted(maps.Keys(e))
	var ps []posting
	for len(keys) > 0 {
		n := 1 // the keys of one block: they share its 4-byte prefix
		for n < len(keys) && keys[n][:4] == keys[0][:4] {
			n++
		}
		old, err := readBlocks(tx, b, keys[:n])
		if err != nil {
			return err
		}
		for _, k := range keys[:n] {
			be := e[k]
			if ps, err = decodeBlock(ps[:0], k, old[k]); err != nil {
				return err
			}
			ps = slices.DeleteFunc(ps, func(p posting) bool { return be.remove[p.doc] })
			ps = append(ps, be.add...)
			slices.SortFunc(ps, func(a, b posting) int { return cmp.Compare(a.doc, b.doc) })
			if len(ps) == 0 {
				err = tx.Delete(b.post, k)
			} else {
				err = tx.Put(b.post, k, encodeBlock(be.block, ps))
			}
			if err != nil {
				return err
			}
		}
		keys = keys[n:]
	}
	return nil
}

// readBlocks reads the stored postings under keys (sorted, of one block): one by one when
// they are few, else in one pass over the block, which on PostgreSQL is a query per 256
// keys rather than one per key (a batch of a build edits thousands of one block's keys).
func readBlocks(tx persistence.Tx, b buckets, keys []string) (map[string][]byte, error) {
	old := make(map[string][]byte, len(keys))
	if len(keys) <= 32 {
		for _, k := range keys {
			v, ok, err := tx.Get(b.post, k)
			if err != nil {
				return nil, err
			}
			if ok {
				old[k] = v
			}
		}
		return old, nil
	}
	i := 0
	err := tx.Scan(b.post, keys[0][:4], func(k string, v []byte) error {
		for i < len(keys) && keys[i] < k {
			i++
		}
		if i < len(keys) && keys[i] == k {
			old[k] = bytes.Clone(v) // the scan's value is valid only in this call
			i++
		}
		return nil
	})
	return old, err
}
