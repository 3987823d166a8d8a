// Package postgres implements persistence.Store on PostgreSQL (15 or newer) with pgx/v5, for
// reef's cluster mode (DESIGN.md §9, docs/scaling.md). It passes the same storetest suite as
// bolt and memory.
//
// Schema (every key is bytea, so order is byte order and any Go string, NUL included, fits;
// values are the same JSON bolt stores):
//
//	reef_meta(name, value)                    schema version
//	reef_sessions(key, info, msg_seq, inbox_seq, outbox_seq)
//	                                          info NULL until PutSession; the *_seq columns are
//	                                          the last seq handed out per kind (bolt's NextSequence)
//	reef_messages|reef_snapshots|reef_inbox|reef_outbox(key, seq, data)
//	reef_dedup(id, at)                        at: unix nanos of the first sighting
//	reef_kv(bucket, key, value)               the named buckets ("cron/jobs": one bucket path)
//
// Transactions: Update runs fn in one SERIALIZABLE transaction, so writers behave as if they
// ran one after the other, as with bolt's single writer, also across several reef processes
// on one database. Inbox, transcript and outbox change in that one transaction. When
// PostgreSQL aborts it for a conflict with a concurrent writer (SQLSTATE 40001, or 40P01 for a
// deadlock) nothing was kept and Update runs fn again from the start, until Options.Timeout:
// fn must be safe to run again (reef's writers already are: the Storage actor re-runs a
// failed batch's writes one by one). View runs fn in a REPEATABLE READ READ ONLY transaction:
// one consistent snapshot.
//
// Concurrency: any number of goroutines may call Update and View; each takes a connection
// from the pool for the length of its transaction.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reefgw/reef/persistence"
)

// DefaultTimeout bounds one Update or View, retries included.
const DefaultTimeout = 2 * time.Minute

// maxBackoff caps the pause between two attempts of a conflicting Update.
const maxBackoff = 50 * time.Millisecond

// Options tune Open. The zero value is what reef uses.
type Options struct {
	// Timeout bounds one Update or View; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxConns caps the connection pool; 0 keeps pgxpool's default (4 or the CPU count).
	MaxConns int32
	// Exclusive makes this store the database's only user among reef processes, as bolt's
	// file lock does: Open takes a session advisory lock on a connection of its own, held
	// until Close (or until the process dies and PostgreSQL drops the connection), and fails
	// with persistence.ErrLocked when another process holds it. One node runs alone on a
	// database until partition leases let several share it (docs/scaling.md).
	Exclusive bool
	// Notify announces every inbox entry on InboxChannel in the transaction that writes it,
	// for the nodes of a cluster (Listen). Off, AppendInbox sends nothing more.
	Notify bool
	// IdleInTransaction ends a session that stays idle inside a transaction longer than
	// this (PostgreSQL's idle_in_transaction_session_timeout), rolling it back and releasing
	// its locks: a cluster node frozen inside a transaction (SIGSTOP, a paused VM) must not
	// hold its lease rows' locks past its lease. 0 keeps the server's setting.
	IdleInTransaction time.Duration
}

// exclusiveLock is the first half of the advisory lock key of Options.Exclusive (the bytes
// of "reef"); the second is the schema's hash.
const exclusiveLock = 0x72656566

// Store is a persistence.Store on a PostgreSQL database.
type Store struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	trips   *tripCounter
	notify  bool // Options.Notify

	quitOnce   sync.Once
	quit       chan struct{} // closed by Close: ends the wait for a commit's outcome (outage.go)
	mu         sync.RWMutex  // held shared by transactions, alone by Close
	closed     bool
	exclusive  bool          // Options.Exclusive (lock.go)
	lockMu     sync.Mutex    // guards holder
	holder     *pgx.Conn     // the connection holding the exclusive lock, or nil
	keeperDone chan struct{} // closed when keepLock ends
	lockOK     atomic.Bool   // the lock was held at the last check

	reachMu   sync.Mutex // guards downSince, downErr (outage.go: Unreachable)
	downSince time.Time
	downErr   error
}

var _ persistence.Store = (*Store)(nil)

// Open connects to the database at url (a libpq URL or key=value string, e.g.
// postgres://reef@db.example/reef), creates reef's tables when they are missing and checks
// the schema version. It fails when the database cannot be reached.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", redactURL(err))
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.IdleInTransaction > 0 {
		cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = fmt.Sprint(opts.IdleInTransaction.Milliseconds())
	}
	trips := &tripCounter{}
	cfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", redactURL(err))
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	s := &Store{pool: pool, timeout: opts.Timeout, trips: trips, notify: opts.Notify, quit: make(chan struct{})}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if opts.Exclusive {
		if err := s.lock(ctx); err != nil {
			pool.Close()
			return nil, fmt.Errorf("postgres: open: %w", err)
		}
		s.exclusive, s.keeperDone = true, make(chan struct{})
		s.lockOK.Store(true)
		go s.keepLock() // lock.go: the lock dies with its connection in an outage
	}
	return s, nil
}

// lock takes the exclusive lock on a connection taken out of the pool.
func (s *Store) lock(ctx context.Context) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := c.Hijack()
	var ok bool
	// Keyed by the schema too: databases that hold several reefs (one schema each, as the
	// tests do) lock each one apart.
	err = conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, hashtext(current_schema()))", int32(exclusiveLock)).Scan(&ok)
	if err != nil {
		conn.Close(ctx)
		return err
	}
	if !ok {
		conn.Close(ctx)
		return fmt.Errorf("%w (another reef node uses this database)", persistence.ErrLocked)
	}
	s.holder = conn
	return nil
}

// Pool returns the store's connection pool, for the packages that keep their own tables in
// the same database (cluster leases) and for `reef doctor`.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// RoundTrips returns how many statements the store has sent to the database since Open
// (BEGIN and COMMIT included): the benchmark divides it by the messages answered.
func (s *Store) RoundTrips() int64 { return s.trips.n.Load() }

// Close closes the pool. It is safe to call more than once; it waits for running
// transactions to end.
func (s *Store) Close() error {
	s.quitOnce.Do(func() { close(s.quit) }) // before the lock: an Update may wait on an outcome
	if s.keeperDone != nil {
		<-s.keeperDone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.pool.Close()
		if s.holder != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = s.holder.Close(ctx) // ends the session: PostgreSQL releases the lock
		}
	}
	return nil
}

// begin takes the shared lock that keeps Close from closing the pool under a transaction.
func (s *Store) begin(op string) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("postgres: %s: %w", op, persistence.ErrClosed)
	}
	return nil
}

// Update runs fn in one SERIALIZABLE transaction and commits it before returning. If fn
// returns an error or panics, nothing it wrote is kept and its error is returned as is. A
// conflict with a concurrent writer runs fn again (see the package comment).
func (s *Store) Update(fn func(persistence.Tx) error) error {
	if err := s.begin("update"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if err := s.locked(); err != nil { // lock.go
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	var err error
	for attempt, lost := 1, 0; ; attempt++ {
		var fnErr bool
		fnErr, err = s.updateOnce(ctx, fn)
		if errors.Is(err, persistence.ErrUnavailable) && !fnErr {
			// A connection of the pool that died with a restarted server fails once; a
			// database that is down fails again at once, and the caller waits for it.
			if lost++; lost > 2 {
				break
			}
		} else if fnErr || !retryable(err) {
			break
		}
		select { // a short, growing, jittered pause lets the conflicting writer finish
		case <-time.After(backoff(attempt)):
		case <-ctx.Done():
			return fmt.Errorf("postgres: update: %w", ctx.Err())
		}
	}
	if errors.Is(err, persistence.ErrUnavailable) {
		s.lockOK.Store(false) // the lock's connection may have broken too (lock.go)
	}
	s.noteReach(err)
	return err
}

// updateOnce runs one attempt of Update; fnErr reports that err is fn's own and not a
// conflict worth another attempt (fn's error wraps the statement's error when it gave up on
// one). A panic in fn rolls back and goes on to the caller.
func (s *Store) updateOnce(ctx context.Context, fn func(persistence.Tx) error) (fnErr bool, err error) {
	ptx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if unreachable(err) {
		return false, unavailable("update", err)
	}
	if err != nil {
		return false, fmt.Errorf("postgres: update: %w", err)
	}
	t := &tx{ctx: ctx, q: ptx, write: true, notify: s.notify}
	committed := false
	defer func() {
		t.done = true
		if !committed {
			_ = ptx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(t); err != nil {
		if lost(ptx, err) { // the connection broke: the server rolls the transaction back
			return false, unavailable("update", err)
		}
		return !retryable(err), err
	}
	xid, err := xactID(ctx, ptx) // to ask what became of it should COMMIT go unanswered
	if err != nil {
		if lost(ptx, err) {
			return false, unavailable("update", err)
		}
		return false, fmt.Errorf("postgres: update: %w", err)
	}
	t.done = true
	pid := ptx.Conn().PgConn().PID()
	if err := ptx.Commit(ctx); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) && lost(ptx, err) { // no answer: committed or not, ask (outage.go)
			return false, s.resolve(xid, pid, err)
		}
		return false, fmt.Errorf("postgres: commit: %w", err)
	}
	committed = true
	return false, nil
}

// View runs fn in a REPEATABLE READ READ ONLY transaction: a consistent snapshot.
func (s *Store) View(fn func(persistence.Reader) error) error {
	err := s.view(fn)
	s.noteReach(err)
	return err
}

func (s *Store) view(fn func(persistence.Reader) error) error {
	if err := s.begin("view"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	ptx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if unreachable(err) {
		return unavailable("view", err)
	}
	if err != nil {
		return fmt.Errorf("postgres: view: %w", err)
	}
	t := &tx{ctx: ctx, q: ptx}
	defer func() {
		t.done = true
		_ = ptx.Rollback(context.WithoutCancel(ctx))
	}()
	if err := fn(t); err != nil {
		if lost(ptx, err) {
			return unavailable("view", err)
		}
		return err
	}
	return nil
}

// backoff is the pause before attempt+1: 1 ms doubling up to maxBackoff, times 0.5 to 1.5.
func backoff(attempt int) time.Duration {
	d := maxBackoff
	if attempt < 6 {
		d = min(maxBackoff, time.Millisecond<<attempt)
	}
	return d/2 + rand.N(d)
}

// retryable reports whether err is PostgreSQL aborting a transaction that may succeed when
// run again: a serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// redactURL keeps a connection string's password out of an error: pgx's parse errors quote
// the string they could not parse.
func redactURL(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("cannot parse the database URL (check its syntax; the URL is not shown because it may hold a password)")
	}
	return err
}

// tripCounter is a pgx tracer that counts the statements sent.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
