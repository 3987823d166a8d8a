// Package memory implements persistence.Store in process memory, for tests and demos.
//
// It has the same semantics as persistence/bolt (both pass persistence/storetest): seqs come
// from per-session, per-kind counters that start at 1 and are never reused while the session
// exists; values are copied in and out, so callers cannot change stored state by mutating
// what they passed or got back.
//
// Concurrency: one sync.RWMutex. Update holds the write lock while fn runs, so Views wait
// for it (unlike bolt, where readers never wait) and fn must not call View. Update applies
// writes in place and keeps an undo log; if fn returns an error or panics, the log is
// replayed backwards.
package memory

import (
	"errors"
	"fmt"
	"sync"

	"github.com/reefgw/reef/persistence"
)

// Store is an in-memory persistence.Store.
type Store struct {
	mu       sync.RWMutex
	closed   bool
	sessions map[string]*session
	dedup    map[string]int64             // id → unix nanos of the first sighting
	kv       map[string]map[string][]byte // named bucket → key → value
}

var _ persistence.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{sessions: map[string]*session{}, dedup: map[string]int64{}, kv: map[string]map[string][]byte{}}
}

var errEmptyKey = errors.New("empty key")

// Update runs fn with the write lock held. If fn returns an error or panics, every write it
// made is undone and its error is returned as is.
func (s *Store) Update(fn func(persistence.Tx) error) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("memory: update: %w", persistence.ErrClosed)
	}
	t := &tx{reader: reader{s: s}}
	committed := false
	defer func() {
		t.done = true
		if !committed {
			t.rollback()
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	committed = true
	return nil
}

// View runs fn with the read lock held.
func (s *Store) View(fn func(persistence.Reader) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("memory: view: %w", persistence.ErrClosed)
	}
	r := &reader{s: s}
	defer func() { r.done = true }()
	return fn(r)
}

// Close makes later Update and View calls fail with persistence.ErrClosed and drops the data.
// It is safe to call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.sessions, s.dedup = nil, nil
	return nil
}
