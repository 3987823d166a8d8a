// Package bolt implements persistence.Store on one bbolt file (DESIGN.md §4).
//
// Layout (integer keys are 8-byte big-endian, so cursor order is numeric order):
//
//	meta/schema           the store format, "2" (persistence.Format)
//	meta/needs            the oldest reef release that reads the file, "v0.1.0"
//	sessions/<key>/info   JSON persistence.SessionInfo
//	sessions/<key>/msgs/<seq>    JSON messages.ChatMessage
//	sessions/<key>/snaps/<seq>   JSON persistence.Snapshot (seq = last entry it covers)
//	sessions/<key>/inbox/<seq>   JSON messages.Inbound
//	sessions/<key>/outbox/<seq>  JSON messages.Outbound
//	dedup/<id>            8-byte unix nanos of the first sighting
//
// Seqs come from each sub-bucket's NextSequence, so they start at 1, are never reused while
// the session exists, and are rolled back with a failed transaction.
//
// Concurrency: any number of goroutines may call View while one calls Update; bbolt
// serialises writers. Update commits with fsync (unless Options.NoSync) before it returns.
package bolt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/persistence"
)

// SchemaVersion is the store format this package reads and writes: persistence.Format.
const SchemaVersion = persistence.Format

// DefaultLockTimeout is how long Open waits for another process to release the file.
const DefaultLockTimeout = 100 * time.Millisecond

var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions")
	bucketDedup    = []byte("dedup")
	keySchema      = []byte("schema")
)

// Options tune Open. The zero value is what reef uses.
type Options struct {
	// LockTimeout bounds the wait for the file lock; 0 means DefaultLockTimeout, so a second
	// reef on the same file fails fast with persistence.ErrLocked.
	LockTimeout time.Duration
	// NoSync skips fsync on commit. Only for benchmarks and throwaway data: a crash of the
	// machine (not only of the process) can then lose or corrupt committed data.
	NoSync bool
	// ReadOnly opens an existing file for reading only, under a shared lock: several readers
	// (`reef sessions` and the like) may hold it at once, a writer may not. Open creates
	// nothing and fails with an error wrapping fs.ErrNotExist when the file is missing;
	// Update fails.
	ReadOnly bool
	// BeforeUpgrade, when set, is called before Open upgrades a file in an older store
	// format (reef's gateway backs the file up there); nil upgrades without it. A file
	// opened ReadOnly is read in its format, never upgraded.
	BeforeUpgrade BeforeUpgrade
}

// ErrEmpty is Open's error (wrapped) for a database file that exists and holds nothing: a
// crash or a full disk truncated it, or something emptied it. Open never makes it a new
// database, since that would silently start over without the history it once held; the
// caller decides (`reef init --fresh` moves it aside).
var ErrEmpty = errors.New("the database file exists but is empty (0 bytes)")

// Store is a persistence.Store on one bbolt file.
type Store struct {
	db   *bbolt.DB
	path string

	closeOnce sync.Once
	closeErr  error
}

var _ persistence.Store = (*Store)(nil)

// Open opens or creates the database at path, creating its parent directory (0700) and the
// file (0600). It fails with an error wrapping persistence.ErrLocked if another process
// holds the file, refuses a file in a newer store format with a *persistence.FormatError,
// upgrades one in an older format in one transaction (after opts.BeforeUpgrade), and fails with an error wrapping
// persistence.ErrCorrupt, saying what is wrong, if the file is damaged (see pages.go): it
// then writes nothing to the file.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.ReadOnly {
		// bbolt would create an empty file and then fail to initialise it.
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("bolt: open %s: %w", path, err)
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	db, err := openDB(path, opts)
	if errors.Is(err, bbolt.ErrTimeout) || errors.Is(err, persistence.ErrLocked) {
		return nil, fmt.Errorf("bolt: open %s: %w (is reef already running?)", path, persistence.ErrLocked)
	}
	if d, ok := errors.AsType[*DamagedError](err); ok {
		d.Path = path
		return nil, d
	}
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	if err := guard(func() error { return prepare(db, path, opts) }); err != nil {
		closeSoon(db)
		if d, ok := errors.AsType[*DamagedError](err); ok {
			d.Path = path
			return nil, d
		}
		if f, ok := errors.AsType[*persistence.FormatError](err); ok {
			return nil, f
		}
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// openDB opens the file with bbolt, after checking it: bbolt, opening a file for writing,
// walks every page at once (to rebuild the freelist) and crashes on a damaged one. The file
// is locked first, as bbolt locks it, and handed to bbolt still locked, so no other process
// can change it between the check and the open. A damaged meta page is an error of bbolt's;
// a panic (bbolt asserts much of what it reads) is turned into one.
func openDB(path string, opts Options) (db *bbolt.DB, err error) {
	f, created, err := openFile(path, opts.ReadOnly)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, !opts.ReadOnly, opts.LockTimeout); err != nil {
		f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() == 0 && !created { // only a file this Open created is a new database
		f.Close()
		return nil, ErrEmpty
	}
	if err != nil || fi.Size() > 0 {
		if err == nil {
			err = verifyFile(f)
		}
		if err != nil {
			f.Close()
			return nil, &DamagedError{Path: path, Problem: err}
		}
	}
	err = guard(func() error {
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{
			Timeout:  opts.LockTimeout,
			NoSync:   opts.NoSync,
			ReadOnly: opts.ReadOnly,
			// The freelist is rebuilt from the pages at open instead of being written by every
			// commit: fewer pages per fsync on the hot path, a slightly slower open.
			NoFreelistSync:  true,
			FreelistType:    bbolt.FreelistMapType,
			InitialMmapSize: initialMmapSize,
			OpenFile:        func(string, int, os.FileMode) (*os.File, error) { return f, nil },
		})
		return err
	})
	if err != nil {
		f.Close() // bbolt has closed it, unless it panicked
	}
	if errors.Is(err, bbolt.ErrInvalid) || errors.Is(err, bbolt.ErrChecksum) {
		err = &DamagedError{Path: path, Problem: err}
	}
	return db, err
}

// openFile opens the file at path, creating it (0600) unless readOnly, and says whether this
// call created it: an empty file that already existed is not a new database.
func openFile(path string, readOnly bool) (f *os.File, created bool, err error) {
	if readOnly {
		f, err = os.OpenFile(path, os.O_RDONLY, 0)
		return f, false, err
	}
	for {
		if f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			return f, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
		if f, err = os.OpenFile(path, os.O_RDWR, 0); !errors.Is(err, fs.ErrNotExist) {
			return f, false, err
		}
		// removed between the two calls: try again
	}
}

// closeSoon closes db, waiting at most a second: after a panic inside a transaction bbolt
// may still hold the lock that Close takes.
func closeSoon(db *bbolt.DB) {
	done := make(chan struct{})
	go func() {
		_ = db.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}

// DamagedError is Open's error for a damaged file: it wraps persistence.ErrCorrupt and
// says what is wrong. DamageHelp says what to do.
type DamagedError struct {
	Path    string
	Problem error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("bolt: open %s: %v: %v", e.Path, persistence.ErrCorrupt, e.Problem)
}

func (e *DamagedError) Unwrap() []error { return []error{persistence.ErrCorrupt, e.Problem} }

// guard runs fn and turns a panic (bbolt's reaction to a page that is not what it expects)
// into an error wrapping persistence.ErrCorrupt.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &DamagedError{Problem: fmt.Errorf("%v", r)}
		}
	}()
	return fn()
}

// prepare checks the file's format and, unless opts.ReadOnly, creates the top buckets and
// upgrades a file in an older format, after opts.BeforeUpgrade, in one transaction.
func prepare(db *bbolt.DB, path string, opts Options) error {
	var from int
	err := db.View(func(btx *bbolt.Tx) error {
		var err error
		if from, err = readFormat(btx); err != nil {
			return err
		}
		if from > persistence.Format {
			return newerError(btx, path, from)
		}
		if opts.ReadOnly {
			for _, name := range [][]byte{bucketMeta, bucketSessions, bucketDedup} {
				if btx.Bucket(name) == nil {
					return fmt.Errorf("not a reef database (no %s bucket)", name)
				}
			}
		}
		return nil
	})
	if err != nil || opts.ReadOnly {
		return err
	}
	if from < persistence.Format && opts.BeforeUpgrade != nil {
		backup := func(w io.Writer) error {
			return db.View(func(btx *bbolt.Tx) error {
				_, err := btx.WriteTo(w)
				return err
			})
		}
		if err := opts.BeforeUpgrade(from, backup); err != nil {
			return fmt.Errorf("before upgrading from store format %d (nothing was changed): %w", from, err)
		}
	}
	return db.Update(func(btx *bbolt.Tx) error { return initSchema(btx, from) })
}

// initSchema creates the top buckets, writes the format of a new file and upgrades a file
// in format from, older than persistence.Format.
func initSchema(btx *bbolt.Tx, from int) error {
	meta, err := btx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	switch {
	case from < persistence.Format:
		err = upgradeFile(btx, from)
	case meta.Get(keySchema) == nil:
		err = stamp(meta, persistence.Format)
	}
	if err != nil {
		return err
	}
	for _, name := range [][]byte{bucketSessions, bucketDedup} {
		if _, err := btx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("bolt: close: %w", err)
		}
	})
	return s.closeErr
}

// Update runs fn in one read-write transaction and commits it, with fsync, before returning.
// If fn returns an error or panics, nothing it wrote is kept and its error is returned as is.
func (s *Store) Update(fn func(persistence.Tx) error) error {
	btx, err := s.db.Begin(true)
	if err != nil {
		return fmt.Errorf("bolt: update: %w", mapErr(err))
	}
	t := &tx{btx: btx}
	defer func() {
		t.done = true
		_ = btx.Rollback() // no-op after a successful commit
	}()
	if err := fn(t); err != nil {
		return err
	}
	t.done = true
	if err := btx.Commit(); err != nil {
		return fmt.Errorf("bolt: commit: %w", err)
	}
	return nil
}

// View runs fn in a read-only transaction that sees a consistent snapshot.
func (s *Store) View(fn func(persistence.Reader) error) error {
	btx, err := s.db.Begin(false)
	if err != nil {
		return fmt.Errorf("bolt: view: %w", mapErr(err))
	}
	t := &tx{btx: btx}
	defer func() {
		t.done = true
		_ = btx.Rollback()
	}()
	return fn(t)
}

// Check verifies the whole file's consistency (the equivalent of `bbolt check`) and returns
// every problem found, joined, or nil. It holds the write lock while it runs, so writers wait
// (on a store opened ReadOnly it runs in a read transaction).
func (s *Store) Check() error {
	btx, err := s.db.Begin(!s.db.IsReadOnly())
	if err != nil {
		return fmt.Errorf("bolt: check: %w", mapErr(err))
	}
	defer func() { _ = btx.Rollback() }()
	var errs []error
	for err := range btx.Check() {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("bolt: check %s: %w", s.path, errors.Join(errs...))
	}
	return nil
}

// Backup writes a consistent copy of the whole database to w, from one read transaction:
// writers go on while it runs, and the copy is the state of the last commit before it began.
func (s *Store) Backup(w io.Writer) (int64, error) {
	var n int64
	err := s.db.View(func(btx *bbolt.Tx) error {
		var err error
		n, err = btx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("bolt: backup: %w", mapErr(err))
	}
	return n, nil
}

// Stats are cheap counters about the database file.
type Stats struct {
	FileSize     int64 // length of the file (bbolt grows it ahead of need: the tail is unwritten, sparse)
	FreePages    int   // pages on the freelist
	PendingPages int   // pages freed but still visible to an open read transaction
	ReadTx       int   // read transactions started since Open
	OpenReadTx   int   // read transactions open now
	Writes       int64 // page writes since Open
}

// Stats returns counters about the database; it takes no lock beyond bbolt's stats mutex.
func (s *Store) Stats() Stats {
	st := s.db.Stats()
	out := Stats{
		FreePages:    st.FreePageN,
		PendingPages: st.PendingPageN,
		ReadTx:       st.TxN,
		OpenReadTx:   st.OpenTxN,
		Writes:       st.TxStats.GetWrite(),
	}
	if fi, err := os.Stat(s.path); err == nil {
		out.FileSize = fi.Size()
	}
	return out
}

// mapErr turns bbolt's closed-database error into persistence.ErrClosed.
func mapErr(err error) error {
	if errors.Is(err, bbolt.ErrDatabaseNotOpen) {
		return fmt.Errorf("%w: %w", persistence.ErrClosed, err)
	}
	return err
}

// initialMmapSize is the address space bbolt maps at open, 1 GiB on 64-bit systems. Mapping
// costs address space, not memory: pages count once touched, as before. bbolt remaps
// whenever the file outgrows its mapping, and a remap inside a write transaction copies
// every node the transaction touched out of the old mapping (node.dereference), then waits
// for every reader: indexing 15,000 1536-dim vectors in one transaction spent most of its
// time there (BenchmarkMemoryIndex). Past 1 GiB bbolt grows the mapping 1 GiB at a time.
// 32-bit systems keep bbolt's default: their address space is too small to spend.
const initialMmapSize = strconv.IntSize / 64 << 30
