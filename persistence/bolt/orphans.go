package bolt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reefgw/reef/persistence"
)

// Pages the tree does not reach are either the current pages of a part the damage cut off,
// or old versions of pages, freed by a later transaction and maybe reused since: bbolt pages
// carry no transaction id, and reef's files keep no freelist, so nothing says which. A
// session found there (a bucket header in a leaf page, or a session's own top page) is
// copied only when everything its pointers reach is its own: no page the tree holds, no page
// another recovered session holds, every page a leaf or branch in key order, every record a
// fit (checkSession). Of several versions of one session the newest is kept: sequences only
// grow, and at equal sequences the one with fewer pending rows is later (rows are deleted,
// never added back). What is kept may still be older than the session was: the repair holds
// back its unanswered messages and unsent replies (holdBack).

// candidate is one version of a session found outside the tree.
type candidate struct {
	key    string
	b      *bucket         // its bucket, as read
	pages  map[uint64]bool // pages its walk read
	beyond int             // pages it points to that are not in the file
	stale  string          // why it cannot be current, "" when it fits
	merged int             // transcript entries copied from its older versions
}

// orphanHeader is a session bucket header found in a leaf page outside the tree.
type orphanHeader struct {
	key   string
	value []byte // the bucket header (and inline page)
}

// findOrphans returns, for every session key wanted that has a version outside the tree
// (pages in taken), the version kept, and the keys whose versions all failed with why.
func findOrphans(pf *pageFile, taken map[uint64]bool, wanted func(key string) bool) (kept []*candidate, failed map[string]string) {
	byKey := map[string][]*candidate{}
	done := map[string]bool{} // key + header: a version already read
	for _, h := range orphanHeaders(pf, taken) {
		if !wanted(h.key) || done[h.key+"\x00"+string(h.value)] {
			continue
		}
		done[h.key+"\x00"+string(h.value)] = true
		byKey[h.key] = append(byKey[h.key], readCandidate(pf, taken, h))
	}
	failed = map[string]string{}
	chosen := map[string]*candidate{}
	for key, cs := range byKey {
		if c := newest(cs); c != nil {
			chosen[key] = c
		} else {
			failed[key] = cs[0].stale
		}
	}
	// Two sessions cannot own one page: at least one of them reached it through a stale
	// pointer. Neither is trusted; the next version of each is tried.
	for changed := true; changed; {
		changed = false
		owner := map[uint64]*candidate{}
		for _, key := range slices.Sorted(maps.Keys(chosen)) {
			c := chosen[key]
			for id := range c.pages {
				o := owner[id]
				if o == nil {
					owner[id] = c
					continue
				}
				if o.stale == "" {
					o.stale = fmt.Sprintf("shares page %d with %s", id, c.key)
				}
				c.stale = fmt.Sprintf("shares page %d with %s", id, o.key)
				changed = true
			}
		}
		for key, c := range chosen {
			if c.stale == "" {
				continue
			}
			if next := newest(byKey[key]); next != nil {
				chosen[key] = next
			} else {
				delete(chosen, key)
				failed[key] = c.stale
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(chosen)) {
		c := chosen[key]
		for _, o := range byKey[key] {
			if o != c && o.stale == "" {
				c.merged += mergeEntries(c.b, o.b)
			}
		}
		kept = append(kept, c)
	}
	return kept, failed
}

// mergeEntries copies into the session b the transcript entries of its older version o that
// it lacks (cut off with its newer pages): entries never change once written. It copies
// nothing when o disagrees with an entry b has, or holds one past b's sequence (a session
// deleted and started again), and returns how many it copied.
func mergeEntries(b, o *bucket) int {
	have, old := b.kid(string(bucketMsgs), true), o.kids[string(bucketMsgs)]
	if old == nil {
		return 0
	}
	for k, v := range old.vals {
		if cur := have.vals[k]; cur != nil && !bytes.Equal(cur, v) || btoi([]byte(k)) > have.seq {
			return 0
		}
	}
	n := 0
	for k, v := range old.vals {
		if have.vals[k] == nil {
			have.vals[k] = v
			n++
		}
	}
	return n
}

// newest returns the newest version in cs that fits, or nil.
func newest(cs []*candidate) *candidate {
	var best *candidate
	for _, c := range cs {
		if c.stale == "" && (best == nil || c.newer(best)) {
			best = c
		}
	}
	return best
}

// newer reports whether c is a later version of its session than d.
func (c *candidate) newer(d *candidate) bool {
	if a, b := c.clock(), d.clock(); a != b {
		return a > b
	}
	if a, b := c.pending(), d.pending(); a != b {
		return a < b
	}
	if a, b := c.updated(), d.updated(); !a.Equal(b) {
		return a.After(b)
	}
	return c.b.records() > d.b.records()
}

// clock sums the sequences of the session's buckets, which only grow.
func (c *candidate) clock() uint64 {
	var n uint64
	for _, k := range c.b.kids {
		n += k.seq
	}
	return n
}

// pending counts the session's inbox and outbox rows.
func (c *candidate) pending() int {
	n := 0
	for _, name := range []string{"inbox", "outbox"} {
		if k := c.b.kids[name]; k != nil {
			n += len(k.vals)
		}
	}
	return n
}

// updated is when the session's info says it was last written.
func (c *candidate) updated() time.Time {
	var info persistence.SessionInfo
	_ = json.Unmarshal(c.b.vals["info"], &info)
	return info.Updated
}

// readCandidate walks the session whose header is h, with every page of taken off limits.
func readCandidate(pf *pageFile, taken map[uint64]bool, h orphanHeader) *candidate {
	w := newWalker(pf)
	w.taken = taken
	root := newBucket(0)
	root.kids[string(bucketSessions)] = newBucket(0)
	collect(w, root)
	path := [][]byte{bucketSessions, []byte(h.key)}
	w.bucket(path, native.Uint64(h.value[8:]))
	if id := native.Uint64(h.value[0:]); id != 0 {
		w.tree(path, id, 1, nil, nil)
	} else {
		w.leaf(path, h.value[bucketHeaderSize:], place{bucket: []byte(h.key)}, 1, nil, nil)
	}
	c := &candidate{key: h.key, b: root.at(path), pages: w.seen, beyond: w.beyond}
	switch misfits := checkSession(h.key, c.b); {
	case w.count > w.beyond:
		c.stale = "its pages hold something else: " + w.problems[0]
	case c.b.vals["info"] == nil:
		c.stale = "its info record is cut off or unreadable"
	case len(misfits) > 0:
		c.stale = "records of something else in its pages: " + misfits[0]
	}
	return c
}

// leavesOutside yields the id and bytes of every readable leaf page outside taken: the pages
// the tree does not reach, where cut-off or older records may still lie.
func leavesOutside(pf *pageFile, taken map[uint64]bool) iter.Seq2[uint64, []byte] {
	return func(yield func(uint64, []byte) bool) {
		last := min(pf.meta.pgid, uint64(pf.size)/pf.meta.pageSize)
		for id := uint64(2); id < last; id++ {
			if taken[id] {
				continue
			}
			buf, err := pf.page(id)
			if err != nil || native.Uint16(buf[8:]) != pageLeaf {
				continue
			}
			if !yield(id, buf) {
				return
			}
		}
	}
}

// wholeLeafValues is leafValues of a leaf page with elements, all of them plain values.
func wholeLeafValues(buf []byte) (map[string][]byte, bool) {
	if elems(buf) < 1 {
		return nil, false
	}
	vals, ok := leafValues(buf)
	return vals, ok && len(vals) == elems(buf)
}

// orphanHeaders lists the session bucket headers in leaf pages outside the tree: elements
// of a sessions leaf (keys "agent:..."), and pages that are a session's own top page.
func orphanHeaders(pf *pageFile, taken map[uint64]bool) []orphanHeader {
	var out []orphanHeader
	for id, buf := range leavesOutside(pf, taken) {
		if key := sessionRoot(buf); key != nil {
			hdr := make([]byte, bucketHeaderSize)
			native.PutUint64(hdr, id)
			out = append(out, orphanHeader{key: string(key), value: hdr})
		}
		for k, v := range leafBuckets(buf) {
			if strings.HasPrefix(k, "agent:") {
				out = append(out, orphanHeader{key: k, value: v})
			}
		}
	}
	return out
}

// leafBuckets returns the bucket elements of leaf page buf, key → header (and inline page).
func leafBuckets(buf []byte) map[string][]byte {
	out := map[string][]byte{}
	for i := range max(elems(buf), 0) {
		e := pageHeaderSize + i*pageElemSize
		flags := native.Uint32(buf[e:])
		pos, ksize, vsize := uint64(native.Uint32(buf[e+4:])), uint64(native.Uint32(buf[e+8:])), uint64(native.Uint32(buf[e+12:]))
		start := uint64(e) + pos
		if flags&leafBucket == 0 || start+ksize+vsize > uint64(len(buf)) || vsize < bucketHeaderSize {
			continue
		}
		out[string(buf[start:start+ksize])] = buf[start+ksize : start+ksize+vsize]
	}
	return out
}

// leafValues returns the plain (not bucket) elements of leaf page buf, and false when an
// element does not fit in the page.
func leafValues(buf []byte) (map[string][]byte, bool) {
	out := map[string][]byte{}
	n := elems(buf)
	for i := range max(n, 0) {
		e := pageHeaderSize + i*pageElemSize
		flags := native.Uint32(buf[e:])
		pos, ksize, vsize := uint64(native.Uint32(buf[e+4:])), uint64(native.Uint32(buf[e+8:])), uint64(native.Uint32(buf[e+12:]))
		start := uint64(e) + pos
		if start+ksize+vsize > uint64(len(buf)) {
			return nil, false
		}
		if flags&leafBucket == 0 {
			out[string(buf[start:start+ksize])] = buf[start+ksize : start+ksize+vsize]
		}
	}
	return out, n >= 0
}

// sessionRoot returns the key of the session whose bucket's top page buf is (its info
// record names it), or nil when buf is not such a page.
func sessionRoot(buf []byte) []byte {
	var key []byte
	for i := range max(elems(buf), 0) {
		e := pageHeaderSize + i*pageElemSize
		pos, ksize, vsize := uint64(native.Uint32(buf[e+4:])), uint64(native.Uint32(buf[e+8:])), uint64(native.Uint32(buf[e+12:]))
		start := uint64(e) + pos
		if start+ksize+vsize > uint64(len(buf)) {
			return nil
		}
		k := string(buf[start : start+ksize])
		if !sessionKeys[k] {
			return nil
		}
		if k == "info" {
			var info struct{ Key string }
			if json.Unmarshal(buf[start+ksize:start+ksize+vsize], &info) != nil || !strings.HasPrefix(info.Key, "agent:") {
				return nil
			}
			key = []byte(info.Key)
		}
	}
	return key
}

// orphanMarks returns the dedup marks in leaf pages outside the tree (pages in taken): a
// page all of whose elements look like marks (a "<channel>:<account>:<chat>:<message>" key,
// an 8-byte time in the last 20 years) is one of the dedup bucket's, current or old. A mark
// says only that a message was seen, which stays true: old ones are kept too, so a message
// a platform delivers again is not answered again.
func orphanMarks(pf *pageFile, taken map[uint64]bool, now time.Time) map[string][]byte {
	out := map[string][]byte{}
	for _, buf := range leavesOutside(pf, taken) {
		vals, ok := wholeLeafValues(buf)
		if !ok {
			continue
		}
		marks := true
		for k, v := range vals {
			marks = marks && isMark(k, v, now)
		}
		if marks {
			maps.Copy(out, vals)
		}
	}
	for k, v := range out {
		out[k] = slices.Clone(v)
	}
	return out
}

// isMark reports whether k, v look like a dedup mark (connector_intake.go).
func isMark(k string, v []byte, now time.Time) bool {
	if len(v) != 8 || strings.Count(k, ":") < 3 || strings.HasPrefix(k, "agent:") {
		return false
	}
	t := time.Unix(0, int64(btoi(v)))
	return t.After(now.AddDate(-20, 0, 0)) && t.Before(now.Add(24*time.Hour))
}
