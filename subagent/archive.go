package subagent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reefgw/reef/persistence"
)

// Archiving. A child that ended is archived ArchiveAfter later (a child of mode "session":
// after its last run): its link is marked Archived, and the gateway unloads its session,
// whose transcript stays in the store (but with cleanup "delete": a child of mode "session"
// keeps its session until it is archived, one of mode "run" only until its run ends). The children due are indexed by due time, so the
// gateway finds them with a short scan and keeps nothing per child in memory; the index is
// in the store, so archiving survives restarts.

// bucketArchive indexes the children to archive: <due, unix ns, 20 digits>\n<child> → "".
const bucketArchive = "subagents/archive"

func archiveKey(due time.Time, child string) string {
	return fmt.Sprintf("%020d\n%s", due.UnixNano(), child)
}

// ScheduleArchive sets l.ArchiveDue to l.Ended + l.ArchiveAfter and indexes it, replacing an
// earlier schedule; call it before Put in the transaction that records the child's end.
func ScheduleArchive(tx persistence.Tx, l *Link) error {
	if err := Unschedule(tx, l); err != nil {
		return err
	}
	if l.ArchiveAfter <= 0 || l.Ended.IsZero() || !l.Archived.IsZero() {
		return nil
	}
	l.ArchiveDue = l.Ended.Add(l.ArchiveAfter)
	return tx.Put(bucketArchive, archiveKey(l.ArchiveDue, l.Child), nil)
}

// Unschedule removes l's archive schedule (a child of mode "session" that runs again).
func Unschedule(tx persistence.Tx, l *Link) error {
	if l.ArchiveDue.IsZero() {
		return nil
	}
	err := tx.Delete(bucketArchive, archiveKey(l.ArchiveDue, l.Child))
	l.ArchiveDue = time.Time{}
	return err
}

// errPast stops the scan of the archive index at the first child not due yet.
var errPast = errors.New("not due")

// NextDue returns when the first child scheduled is due (zero when none is).
func NextDue(r persistence.Reader) (time.Time, error) {
	var next time.Time
	err := r.Scan(bucketArchive, "", func(k string, _ []byte) error {
		ns, _, _ := strings.Cut(k, "\n")
		n, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			return fmt.Errorf("subagent: archive index key %q: %w", k, err)
		}
		next = time.Unix(0, n)
		return errPast
	})
	if errors.Is(err, errPast) {
		err = nil
	}
	return next, err
}

// Archive marks archived up to limit children due at now, and returns their links and the due
// time of the next child (zero when none is scheduled).
func Archive(tx persistence.Tx, now time.Time, limit int) (archived []Link, next time.Time, err error) {
	var keys []string
	err = tx.Scan(bucketArchive, "", func(k string, _ []byte) error {
		ns, _, _ := strings.Cut(k, "\n")
		n, perr := strconv.ParseInt(ns, 10, 64)
		if perr != nil {
			return fmt.Errorf("subagent: archive index key %q: %w", k, perr)
		}
		if due := time.Unix(0, n); due.After(now) || len(keys) >= limit {
			next = due
			return errPast
		}
		keys = append(keys, k)
		return nil
	})
	if err != nil && !errors.Is(err, errPast) {
		return nil, time.Time{}, err
	}
	for _, k := range keys {
		if err := tx.Delete(bucketArchive, k); err != nil {
			return nil, time.Time{}, err
		}
		_, child, _ := strings.Cut(k, "\n")
		l, ok, err := Get(tx, child)
		if err != nil {
			return nil, time.Time{}, err
		}
		if !ok || l.Active() || !l.Archived.IsZero() { // running again, or already done
			continue
		}
		l.Archived, l.ArchiveDue = now, time.Time{}
		if err := Put(tx, &l); err != nil {
			return nil, time.Time{}, err
		}
		if l.Cleanup == "delete" { // a child of mode "session" kept its session until now
			if err := tx.DeleteSession(l.Child); err != nil {
				return nil, time.Time{}, err
			}
		}
		archived = append(archived, l)
	}
	return archived, next, nil
}
