package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		return nil
	})
	rep.Lost = w.count
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
