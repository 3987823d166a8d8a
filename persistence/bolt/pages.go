package bolt

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"
)

// A damaged file must give a clear error, not a crash. bbolt trusts its file: it reads pages
// through a memory map at the offsets the pages themselves name, so a truncated file or a
// garbled page makes it fault (a goroutine dump no recover catches) or fail an assertion,
// some of it in goroutines of its own. pageFile reads the same format with every offset
// checked against the file, and walker visits every bucket, key and value reachable from
// the current meta page, collecting what is wrong instead of trusting it, and checking what
// bbolt's own open checks (it rebuilds the freelist by walking every page). Open walks the
// file this way, under the file's lock, before bbolt sees it (verifyFile); Repair walks it
// to copy out whatever is still readable (salvage).
//
// The format (go.etcd.io/bbolt v1.5.0, internal/common; native byte order):
//
//	page header   id u64 | flags u16 | count u16 | overflow u32        (16 bytes)
//	meta          magic u32 | version u32 | pageSize u32 | flags u32 | root {pgid u64, seq u64}
//	              | freelist u64 | pgid u64 (high water mark) | txid u64 | checksum u64 (FNV-64a)
//	branch elem   pos u32 | ksize u32 | pgid u64                       (16 bytes; key at elem+pos)
//	leaf elem     flags u32 | pos u32 | ksize u32 | vsize u32          (16 bytes; value after key)
//	bucket value  root u64 | sequence u64 [| inline leaf page when root is 0]

const (
	pageHeaderSize   = 16
	pageElemSize     = 16
	bucketHeaderSize = 16
	metaSize         = 64

	pageBranch   = 0x01
	pageLeaf     = 0x02
	pageFreelist = 0x10
	leafBucket   = 0x01

	boltMagic   = 0xED0CDAED
	boltVersion = 2
	noFreelist  = ^uint64(0)
	maxDepth    = 64 // far beyond any real tree: deeper means a cycle
	maxProblems = 10 // problems kept for the message; all are counted
)

var native = binary.NativeEndian

// fileMeta is the part of a meta page the walk needs.
type fileMeta struct {
	pageSize             uint64
	root, rootSeq        uint64
	freelist, pgid, txid uint64
}

// pageFile reads pages of a bbolt file with every offset checked.
type pageFile struct {
	f     io.ReaderAt
	size  int64
	meta  fileMeta   // the one walked
	metas []fileMeta // the valid ones, the one bbolt uses first
	// badMeta says what is wrong with a meta page when only one is valid. bbolt then opens
	// the file at the other one's transaction, which may be the one before the last: the
	// last one would be lost without a word.
	badMeta error
}

// newPageFile reads the meta pages of f and picks the one bbolt would use: the valid one
// with the higher transaction id.
func newPageFile(f *os.File) (*pageFile, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf := &pageFile{f: f, size: fi.Size()}
	return pf, pf.readMeta()
}

func (pf *pageFile) readMeta() error {
	m0, err0 := pf.metaAt(0)
	ps := int64(os.Getpagesize()) // where bbolt looks for the second meta page when the first is bad
	if err0 == nil {
		ps = int64(m0.pageSize)
	}
	m1, err1 := pf.metaAt(ps)
	if err0 == nil && (err1 != nil || m0.txid >= m1.txid) {
		pf.metas = append(pf.metas, m0)
	}
	if err1 == nil {
		pf.metas = append(pf.metas, m1)
	}
	if err0 == nil && err1 == nil && m0.txid < m1.txid {
		pf.metas = append(pf.metas, m0)
	}
	if len(pf.metas) == 0 {
		return fmt.Errorf("both meta pages are damaged (%v; %v)", err0, err1)
	}
	if pf.badMeta = cmp.Or(err0, err1); pf.badMeta != nil {
		pf.badMeta = fmt.Errorf("%w: the last transaction may be lost", pf.badMeta)
	}
	pf.meta = pf.metas[0]
	return nil
}

// truncated says whether the file is shorter than the meta page says it is.
func (pf *pageFile) truncated() error {
	m := pf.meta
	if need := m.pgid * m.pageSize; uint64(pf.size) < need {
		return fmt.Errorf("the file is truncated: it has %d bytes, its last transaction wrote %d pages (%d bytes)", pf.size, m.pgid, need)
	}
	return nil
}

// metaAt reads and validates the meta page at offset off.
func (pf *pageFile) metaAt(off int64) (fileMeta, error) {
	var b [pageHeaderSize + metaSize]byte
	if _, err := pf.f.ReadAt(b[:], off); err != nil {
		return fileMeta{}, fmt.Errorf("meta page at %d: %w", off, err)
	}
	m := b[pageHeaderSize:]
	if native.Uint32(m[0:]) != boltMagic {
		return fileMeta{}, fmt.Errorf("meta page at %d: not a bbolt meta page", off)
	}
	if v := native.Uint32(m[4:]); v != boltVersion {
		return fileMeta{}, fmt.Errorf("meta page at %d: format version %d, want %d", off, v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != native.Uint64(m[56:]) {
		return fileMeta{}, fmt.Errorf("meta page at %d: checksum mismatch", off)
	}
	ps := uint64(native.Uint32(m[8:]))
	if ps < 512 || ps > 1<<20 || ps&(ps-1) != 0 {
		return fileMeta{}, fmt.Errorf("meta page at %d: page size %d", off, ps)
	}
	return fileMeta{pageSize: ps, root: native.Uint64(m[16:]), rootSeq: native.Uint64(m[24:]),
		freelist: native.Uint64(m[32:]), pgid: native.Uint64(m[40:]), txid: native.Uint64(m[48:])}, nil
}

// errBeyond marks a page that is not in the file (cut off, or past the high water mark): its
// loss says nothing about whoever pointed to it, unlike a page that holds something else.
var errBeyond = errors.New("not in the file")

// page reads page id with its overflow pages, checking that it lies in the file, below the
// high water mark, and says it is page id.
func (pf *pageFile) page(id uint64) ([]byte, error) {
	ps, hwm := pf.meta.pageSize, pf.meta.pgid
	if id < 2 || id >= hwm {
		return nil, fmt.Errorf("page %d: out of range [2, %d): %w", id, hwm, errBeyond)
	}
	buf := make([]byte, ps)
	if _, err := pf.f.ReadAt(buf, int64(id*ps)); err != nil {
		return nil, fmt.Errorf("page %d: %w (%w)", id, err, errBeyond)
	}
	if got := native.Uint64(buf[0:]); got != id {
		return nil, fmt.Errorf("page %d: holds the header of page %d (overwritten)", id, got)
	}
	overflow := uint64(native.Uint32(buf[12:]))
	if overflow == 0 {
		return buf, nil
	}
	if id+overflow >= hwm || (id+overflow+1)*ps > uint64(pf.size) {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the end", id, overflow)
	}
	buf = append(buf, make([]byte, overflow*ps)...)
	if _, err := pf.f.ReadAt(buf[ps:], int64((id+1)*ps)); err != nil {
		return nil, fmt.Errorf("page %d: %w (%w)", id, err, errBeyond)
	}
	return buf, nil
}

// walker visits what is reachable from the meta page. Each callback may be nil.
type walker struct {
	pf       *pageFile
	seen     map[uint64]bool
	taken    map[uint64]bool // pages another walk owns: reaching one is a stale pointer
	problems []string
	count    int // problems found, including those not kept
	beyond   int // of those, pages not in the file (errBeyond)

	bucket func(path [][]byte, seq uint64) // a bucket, before its contents
	value  func(path [][]byte, k, v []byte)
	hurt   func(path [][]byte) // a problem inside the bucket at path (nil: above every bucket)
	at     uint64              // during value and bucket: the page that holds the element
}

func newWalker(pf *pageFile) *walker { return &walker{pf: pf, seen: map[uint64]bool{}} }

func (w *walker) problem(format string, args ...any) { w.problemAt(nil, format, args...) }

// problemAt notes a problem met inside the bucket at path.
func (w *walker) problemAt(path [][]byte, format string, args ...any) {
	if w.hurt != nil {
		w.hurt(path)
	}
	for _, a := range args {
		if err, ok := a.(error); ok && errors.Is(err, errBeyond) {
			w.beyond++
		}
	}
	w.count++
	if len(w.problems) < maxProblems {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// err sums up the problems found, or nil.
func (w *walker) err() error {
	if w.count == 0 {
		return nil
	}
	s := strings.Join(w.problems, "; ")
	if more := w.count - len(w.problems); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return fmt.Errorf("%d problem(s): %s", w.count, s)
}

// walk visits the freelist page (when the file keeps one) and every bucket.
func (w *walker) walk() {
	if err := w.pf.badMeta; err != nil {
		w.problem("%v", err)
	}
	if err := w.pf.truncated(); err != nil {
		w.problem("%v", err)
	}
	if fl := w.pf.meta.freelist; fl != noFreelist {
		w.freelist(fl)
	}
	if root := w.pf.meta.root; root == 0 || root == 1 {
		w.problem("the root page %d is a meta page", root)
		return
	}
	w.tree(nil, w.pf.meta.root, 0, nil, nil)
}

func (w *walker) freelist(id uint64) {
	buf, err := w.pf.page(id)
	if err != nil {
		w.problem("freelist: %v", err)
		return
	}
	w.mark(id, buf)
	if flags := native.Uint16(buf[8:]); flags != pageFreelist {
		w.problem("freelist page %d: flags %#x", id, flags)
		return
	}
	n, start := uint64(native.Uint16(buf[10:])), uint64(pageHeaderSize)
	if n == 0xFFFF { // the real count is the first element
		if len(buf) < pageHeaderSize+8 {
			w.problem("freelist page %d: too short", id)
			return
		}
		n, start = native.Uint64(buf[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > uint64(len(buf)) || start+n*8 > uint64(len(buf)) {
		w.problem("freelist page %d: %d ids do not fit", id, n)
	}
}

func (w *walker) mark(id uint64, buf []byte) {
	for i := uint64(0); i < uint64(len(buf))/w.pf.meta.pageSize; i++ {
		w.seen[id+i] = true
	}
}

// tree visits the page id (a bucket's root or a page below it), whose keys must lie in
// [lo, hi) (nil: unbounded), and returns the greatest key below it. The key order is checked
// as bbolt checks it when it rebuilds the freelist at open: there, a problem is a panic while
// bbolt's checking goroutine goes on reading a closed transaction, a crash.
func (w *walker) tree(path [][]byte, id uint64, depth int, lo, hi []byte) []byte {
	if depth > maxDepth {
		w.problemAt(path, "page %d: more than %d levels deep (a cycle?)", id, maxDepth)
		return nil
	}
	if w.seen[id] {
		w.problemAt(path, "page %d: referenced twice", id)
		return nil
	}
	if w.taken[id] {
		w.problemAt(path, "page %d: belongs to the tree (a stale pointer)", id)
		return nil
	}
	buf, err := w.pf.page(id)
	if err != nil {
		w.problemAt(path, "%v", err)
		return nil
	}
	w.mark(id, buf)
	switch flags := native.Uint16(buf[8:]); {
	case flags == pageBranch:
		return w.branch(path, id, buf, depth, lo, hi)
	case flags == pageLeaf:
		return w.leaf(path, buf, place{page: id}, depth, lo, hi)
	default:
		w.problemAt(path, "page %d: neither a branch nor a leaf page (flags %#x)", id, flags)
		return nil
	}
}

// inOrder reports whether key, the i-th on its page, comes after prev (the previous key, or
// the lower bound for the first) and before hi, as bbolt's verifyKeyOrder wants.
func inOrder(i int, key, prev, hi []byte) bool {
	c := bytes.Compare(prev, key)
	return (i == 0 && (prev == nil || c <= 0) || i > 0 && c < 0) && (hi == nil || bytes.Compare(key, hi) < 0)
}

// elems returns the element count of a page, or -1 when the elements do not fit in it.
func elems(buf []byte) int {
	n := int(native.Uint16(buf[10:]))
	if pageHeaderSize+n*pageElemSize > len(buf) {
		return -1
	}
	return n
}

func (w *walker) branch(path [][]byte, id uint64, buf []byte, depth int, lo, hi []byte) []byte {
	n := elems(buf)
	if n < 0 {
		w.problemAt(path, "page %d: %d elements do not fit", id, native.Uint16(buf[10:]))
		return nil
	}
	key := func(i int) []byte {
		e := pageHeaderSize + i*pageElemSize
		pos, ksize := uint64(native.Uint32(buf[e:])), uint64(native.Uint32(buf[e+4:]))
		if start := uint64(e) + pos; start+ksize <= uint64(len(buf)) {
			return buf[start : start+ksize]
		}
		return nil
	}
	for i := range n {
		if key(i) == nil || i < n-1 && key(i+1) == nil {
			w.problemAt(path, "page %d: element %d points past the page", id, i)
			return nil
		}
	}
	running, greatest := lo, []byte(nil)
	for i := range n {
		k := key(i)
		if !inOrder(i, k, running, hi) {
			w.problemAt(path, "page %d: key %d out of order", id, i)
		}
		upper := hi
		if i < n-1 {
			upper = key(i + 1)
		}
		e := pageHeaderSize + i*pageElemSize
		greatest = w.tree(path, native.Uint64(buf[e+8:]), depth+1, k, upper)
		running = greatest
	}
	return greatest
}

// place names a leaf page in a problem: a page, or the inline page of a bucket in one.
type place struct {
	page   uint64
	bucket []byte
}

func (p place) String() string {
	if p.bucket != nil {
		return fmt.Sprintf("page %d, bucket %q", p.page, p.bucket)
	}
	return fmt.Sprintf("page %d", p.page)
}

func (w *walker) leaf(path [][]byte, buf []byte, where place, depth int, lo, hi []byte) []byte {
	n := elems(buf)
	if n < 0 {
		w.problemAt(path, "%v: %d elements do not fit", where, native.Uint16(buf[10:]))
		return nil
	}
	running := lo
	for i := range n {
		e := pageHeaderSize + i*pageElemSize
		flags := native.Uint32(buf[e:])
		pos, ksize, vsize := uint64(native.Uint32(buf[e+4:])), uint64(native.Uint32(buf[e+8:])), uint64(native.Uint32(buf[e+12:]))
		start := uint64(e) + pos
		if start+ksize+vsize > uint64(len(buf)) {
			w.problemAt(path, "%v: element %d points past the page", where, i)
			continue
		}
		k, v := buf[start:start+ksize], buf[start+ksize:start+ksize+vsize]
		if !inOrder(i, k, running, hi) {
			w.problemAt(path, "%v: key %d out of order", where, i)
		}
		running = k
		if flags&leafBucket == 0 {
			if w.value != nil {
				w.at = where.page
				w.value(path, k, v)
			}
			continue
		}
		child := append(append([][]byte(nil), path...), k)
		if len(v) < bucketHeaderSize {
			w.problemAt(child, "%v: bucket %q: header too short", where, k)
			continue
		}
		if w.bucket != nil {
			w.at = where.page
			w.bucket(child, native.Uint64(v[8:]))
		}
		root := native.Uint64(v[0:])
		if root != 0 {
			w.tree(child, root, depth+1, nil, nil)
			continue
		}
		inline := v[bucketHeaderSize:]
		if len(inline) < pageHeaderSize || native.Uint16(inline[8:]) != pageLeaf {
			w.problemAt(child, "%v: bucket %q: its inline page is not a leaf page", where, k)
			continue
		}
		w.leaf(child, inline, place{page: where.page, bucket: k}, depth+1, nil, nil)
	}
	if n == 0 {
		return nil // as bbolt: an empty page bounds nothing
	}
	return running
}

// verifyFile walks the file and returns what is wrong with it, or nil. It reads only.
func verifyFile(f *os.File) error {
	pf, err := newPageFile(f)
	if err != nil {
		return err
	}
	w := newWalker(pf)
	w.walk()
	return w.err()
}
