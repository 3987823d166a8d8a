package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotDamaged is returned by Repair for a file that verifies: there is nothing to repair.
var ErrNotDamaged = errors.New("the database is not damaged: nothing to repair")

// RepairReport says what Repair found and did.
type RepairReport struct {
	Damage  error  // what is wrong with the old file
	Kept    string // where the old file is now, untouched
	Buckets int    // buckets copied (sessions, their transcripts, ...)
	Records int    // records copied
	Lost    int    // problems met in the tree: each is a page, an element or a bucket not copied
	// Older: the copy may be of the state one transaction before the last: the last one's
	// root page is unreadable, or a meta page is damaged (nothing says which was the last).
	Older bool
	// Recovered counts conversations found in pages the tree no longer reaches (below a
	// damaged page, or in the part of a truncated file that is left) and copied.
	Recovered int
	// Marks counts dedup marks found in pages the tree no longer reaches and copied.
	Marks int
	// Conversations says, for every conversation the repair met, what it kept and lost,
	// ordered by key.
	Conversations []Conversation
}

// How a conversation came through a repair (Conversation.State).
const (
	ConvKept      = "kept"      // read whole from the last transaction
	ConvDamaged   = "damaged"   // read from the last transaction, with damaged parts lost
	ConvOlder     = "older"     // read from the transaction before the last
	ConvRecovered = "recovered" // found outside the tree: current or older, nothing says which
	ConvLost      = "lost"      // nothing of it could be proven its own
)

// Conversation is what a repair did with one conversation.
type Conversation struct {
	Key      string
	State    string // ConvKept, ConvDamaged, ConvOlder, ConvRecovered or ConvLost
	Messages int    // transcript entries copied
	Damaged  int    // damaged parts met inside it (records there are lost)
	Misfits  int    // records that did not fit it (of another kind, session or chat), not copied
	// A conversation whose state may be older than it was (older or recovered) answers and
	// sends nothing again by itself: of its unanswered messages, those its transcript
	// already answers are dropped (Answered) and the others set aside as dead letters
	// (HeldMessages); its unsent replies are set aside as dead replies (HeldReplies), and
	// its draft record, which may name a message holding a delivered answer, is dropped.
	Answered     int
	HeldMessages int
	HeldReplies  int
	Why          string // for ConvLost: why no copy was kept
	// Loose counts transcript entries found in pages cut off from it (they name its chat)
	// or in its older copies;
	// Rebuilt says its own pages were lost and it holds only those, with an info record
	// naming its key and chat.
	Loose   int
	Rebuilt bool
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

	// The last transaction's tree is copied unless its root page cannot be read: then the
	// one before it (the other meta page) is, when its root can.
	rep.Older = pf.badMeta != nil
	if !rootReadable(pf) && len(pf.metas) > 1 {
		pf.meta = pf.metas[1]
		if rootReadable(pf) {
			rep.Older = true
		} else {
			pf.meta = pf.metas[0]
		}
	}

	stamp := now.UTC().Format("20060102-150405")
	tmp := path + ".repair-" + stamp
	if err := salvage(pf, tmp, now, &rep); err != nil {
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

// rootReadable reports whether the root page of pf's meta is in the file and a branch or a
// leaf page whose elements fit.
func rootReadable(pf *pageFile) bool {
	buf, err := pf.page(pf.meta.root)
	if err != nil || elems(buf) < 0 {
		return false
	}
	flags := native.Uint16(buf[8:])
	return flags == pageBranch || flags == pageLeaf
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
