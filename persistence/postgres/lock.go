package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reefgw/reef/persistence"
)

// The exclusive lock (Options.Exclusive) lives as long as the connection that took it: when
// the database is unreachable that connection breaks and PostgreSQL drops the lock. keepLock
// checks the connection every lockCheck and takes the lock again on a new one; until it has
// it (or after an Update found the database unreachable, which may have broken the lock's
// connection too), Update takes it itself before writing, and fails with persistence.ErrLocked when
// another reef took it meanwhile: two reefs without cluster mode never write one database.

// lockCheck is how often keepLock checks the lock's connection.
const lockCheck = time.Second

// keepLock runs until Close.
func (s *Store) keepLock() {
	defer close(s.keeperDone)
	t := time.NewTicker(lockCheck)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		_ = s.ensureLock()
	}
}

// ensureLock checks that this store holds the exclusive lock, taking it again when its
// connection broke. It fails with an ErrUnavailable error while the database cannot be
// reached, and with ErrLocked when another process holds the lock.
func (s *Store) ensureLock() (err error) {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	defer func() { s.lockOK.Store(err == nil) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.holder != nil {
		if s.holder.Ping(ctx) == nil {
			return nil
		}
		_ = s.holder.Close(ctx)
		s.holder = nil
	}
	err = s.lock(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, persistence.ErrLocked):
		return fmt.Errorf("postgres: the database's lock was taken by another reef while this one could not reach it: %w", err)
	case unreachable(err):
		return unavailable("lock", err)
	}
	return fmt.Errorf("postgres: lock: %w", err)
}

// locked is what Update asks before it writes: nil when the store is not exclusive or
// holds its lock (taken again here when keepLock has not yet).
func (s *Store) locked() error {
	if !s.exclusive || s.lockOK.Load() {
		return nil
	}
	return s.ensureLock()
}
