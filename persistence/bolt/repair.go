package bolt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// ErrNotDamaged is returned by Repair for a file that verifies: there is nothing to repair.
var ErrNotDamaged = errors.New("the database is not damaged: nothing to repair")

// RepairReport says what Repair found and did.
type RepairReport struct {
	Damage  error  // what is wrong with the old file
	Kept    string // where the old file is now, untouched
	Buckets int    // buckets copied (sessions, their transcripts, ...)
	Records int    // records copied
	Lost    int    // problems met while copying: each is a page, an element or a bucket not copied
	Older   bool   // copied from the state one transaction before the last: the last one is unreadable
	// Recovered counts conversations found in pages the tree no longer reaches (below a
	// damaged page, or in the part of a truncated file that is left) and copied.
	Recovered int
}

// Repair copies every record still readable in the damaged database at path into a new file
// beside it, checks the new file, then renames the old one to <path>.corrupt-<time> (its
// bytes untouched) and the new one to path. It holds the file's lock throughout, so it fails
// with persistence.ErrLocked while reef runs, and returns ErrNotDamaged, changing nothing,
// for a file that verifies. On an error the old file is where it was and nothing is left
// behind.
func Repair(path string, now time.Time) (RepairReport, error) {
	var rep RepairReport
	f, err := os.Open(path)
	if err != nil {
		return rep, fmt.Errorf("bolt: repair: %w", err)
	}
	defer f.Close() // releases the lock
	if err := lockFile(f, true, 0); err != nil {
		return rep, fmt.Errorf("bolt: repair %s: %w", path, err)
	}
	pf, err := newPageFile(f)
	if err != nil {
		return rep, fmt.Errorf("bolt: repair %s: nothing can be read: %w", path, err)
	}
	check := newWalker(pf)
	check.walk()
	if rep.Damage = check.err(); rep.Damage == nil {
		return rep, ErrNotDamaged
	}

	// A damaged root can leave the latest tree unreadable while the one before it (the other
	// meta page, one transaction older) is still whole: copy from whichever holds more.
	best, most := pf.metas[0], -1
	for _, m := range pf.metas {
		pf.meta = m
		dry := newWalker(pf)
		n := 0
		dry.value = func([][]byte, []byte, []byte) { n++ }
		dry.walk()
		if n > most {
			best, most = m, n
		}
	}
	pf.meta = best
	rep.Older = best != pf.metas[0]

	stamp := now.UTC().Format("20060102-150405")
	tmp := path + ".repair-" + stamp
	if err := salvage(pf, tmp, &rep); err != nil {
		_ = os.Remove(tmp)
		return rep, fmt.Errorf("bolt: repair %s: %w", path, err)
	}
	rep.Kept = path + ".corrupt-" + stamp
	if err := os.Rename(path, rep.Kept); err != nil {
		_ = os.Remove(tmp)
		return rep, fmt.Errorf("bolt: repair %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Rename(rep.Kept, path) // put the old file back
		_ = os.Remove(tmp)
		return rep, fmt.Errorf("bolt: repair %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil { // make the renames durable
		_ = d.Sync()
		d.Close()
	}
	return rep, nil
}

// salvage writes what the walk of pf can read into a new database at dst, then checks it.
func salvage(pf *pageFile, dst string, rep *RepairReport) error {
	db, err := bbolt.Open(dst, 0o600, &bbolt.Options{Timeout: DefaultLockTimeout, NoFreelistSync: true,
		FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return err
	}
	w := newWalker(pf)
	err = db.Update(func(btx *bbolt.Tx) error {
		buckets := map[string]*bbolt.Bucket{}
		name := func(path [][]byte) string { return fmt.Sprintf("%q", path) }
		w.bucket = func(path [][]byte, seq uint64) {
			var b *bbolt.Bucket
			var err error
			if len(path) == 1 {
				b, err = btx.CreateBucketIfNotExists(path[0])
			} else if parent := buckets[name(path[:len(path)-1])]; parent != nil {
				b, err = parent.CreateBucketIfNotExists(path[len(path)-1])
			} else {
				return // the parent could not be made: reported there
			}
			if err == nil {
				err = b.SetSequence(max(b.Sequence(), seq))
			}
			if err != nil {
				w.problem("bucket %q: %v", path, err)
				return
			}
			buckets[name(path)] = b
			rep.Buckets++
		}
		w.value = func(path [][]byte, k, v []byte) {
			b := buckets[name(path)]
			if b == nil {
				w.problem("a record outside any bucket (%q)", k)
				return
			}
			if err := b.Put(k, v); err != nil {
				w.problem("bucket %q, key %q: %v", path, k, err)
				return
			}
			rep.Records++
		}
		w.walk()
		rep.Lost = w.count
		for _, o := range lostSessions(pf, w.seen, buckets[name([][]byte{bucketSessions})]) {
			rw := newWalker(pf) // problems in pages outside the tree are expected: not counted
			rw.bucket, rw.value = w.bucket, w.value
			if buckets[name([][]byte{bucketSessions})] == nil {
				rw.bucket([][]byte{bucketSessions}, 0)
			}
			o.walk(rw)
			rep.Recovered++
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	s, err := Open(dst, Options{})
	if err != nil {
		return fmt.Errorf("the new file does not open: %w", err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		return fmt.Errorf("the new file fails its check: %w", err)
	}
	return nil
}

// DamageHelp is what to tell a user whose database at path is damaged: that it is untouched,
// and what to run.
func DamageHelp(path string) string {
	base := filepath.Base(path)
	return strings.Join([]string{
		"reef has not changed the file. To go on, stop every reef using it, then:",
		"  reef doctor            says what is wrong",
		"  reef doctor --repair   copies every record still readable into a new " + base + ",",
		"                         keeping the damaged file beside it as " + base + ".corrupt-<time>",
		"or put back a backup of " + path + ".",
	}, "\n")
}

// orphan is a session bucket found in a leaf page outside the tree.
type orphan struct {
	key, value []byte // the session key and its bucket header (and inline page)
}

// walk copies the session through w's callbacks.
func (o orphan) walk(w *walker) {
	path := [][]byte{bucketSessions, o.key}
	w.bucket(path, native.Uint64(o.value[8:]))
	if root := native.Uint64(o.value[0:]); root != 0 {
		w.tree(path, root, 1, nil, nil)
	} else {
		w.leaf(path, o.value[bucketHeaderSize:], place{bucket: o.key}, 1, nil, nil)
	}
}

// sessionKeys are the keys a session's bucket holds (tx.go); a bucket with others is not one.
var sessionKeys = map[string]bool{"info": true, "msgs": true, "snaps": true, "inbox": true, "outbox": true}

// lostSessions finds sessions whose pages the tree no longer reaches: it reads every page
// the walk did not visit, takes the session buckets listed in leaf pages (keys "agent:..."),
// and keeps, for each key not in sessions already, the version that holds a session's
// buckets and the most records. Old versions of pages linger in a bbolt file until reused, so
// what is found may be older than what was lost; it is better than nothing.
func lostSessions(pf *pageFile, seen map[uint64]bool, sessions *bbolt.Bucket) []orphan {
	best := map[string]orphan{}
	most := map[string]int{}
	last := min(pf.meta.pgid, uint64(pf.size)/pf.meta.pageSize)
	for id := uint64(2); id < last; id++ {
		if seen[id] {
			continue
		}
		buf, err := pf.page(id)
		if err != nil || native.Uint16(buf[8:]) != pageLeaf {
			continue
		}
		consider := func(o orphan) {
			if sessions != nil && sessions.Bucket(o.key) != nil {
				return
			}
			if count := o.records(pf); count > most[string(o.key)] {
				best[string(o.key)], most[string(o.key)] = o, count
			}
		}
		if key := sessionRoot(buf); key != nil { // the page is a session's own
			hdr := make([]byte, bucketHeaderSize)
			native.PutUint64(hdr, id)
			consider(orphan{key: key, value: hdr})
		}
		n := elems(buf)
		for i := range max(n, 0) {
			e := pageHeaderSize + i*pageElemSize
			flags := native.Uint32(buf[e:])
			pos, ksize, vsize := uint64(native.Uint32(buf[e+4:])), uint64(native.Uint32(buf[e+8:])), uint64(native.Uint32(buf[e+12:]))
			start := uint64(e) + pos
			if flags&leafBucket == 0 || start+ksize+vsize > uint64(len(buf)) || vsize < bucketHeaderSize {
				continue
			}
			k, v := buf[start:start+ksize], buf[start+ksize:start+ksize+vsize]
			if strings.HasPrefix(string(k), "agent:") {
				consider(orphan{key: k, value: v})
			}
		}
	}
	out := make([]orphan, 0, len(best))
	for _, o := range best {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b orphan) int { return bytes.Compare(a.key, b.key) })
	return out
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

// records counts what the session holds, or 0 when its top level is not a session's.
func (o orphan) records(pf *pageFile) int {
	dry := newWalker(pf)
	n, info, other := 0, false, false
	dry.bucket = func(path [][]byte, _ uint64) {
		if len(path) == 3 && !sessionKeys[string(path[2])] {
			other = true
		}
	}
	dry.value = func(path [][]byte, k, _ []byte) {
		n++
		if len(path) == 2 {
			info = info || string(k) == "info"
			other = other || string(k) != "info"
		}
	}
	o.walk(dry)
	if !info || other {
		return 0
	}
	return n
}
