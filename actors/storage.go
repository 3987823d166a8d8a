package actors

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
)

// Storage is the single writer of the Store. It group-commits: requests that arrive while a
// commit is running are applied together in the next transaction, and each requester is told
// the outcome only after its transaction is durable. The commit itself runs in a goroutine
// Storage owns, so Receive never waits on the disk.
type Storage struct {
	store     persistence.Store
	cluster   Ownership // fences the writes of a cluster node (storage_fence.go); nil: none
	health    *storageHealth
	log       zerolog.Logger
	pending   []*storeWrite
	busy      bool
	inflight  *flight // the running commit
	stopPrune func()  // stops the pruning ticker (storage_prune.go)
	outage    outage  // the database is unreachable: writes wait (storage_outage.go)
}

// storeWrite asks Storage to apply writes in a transaction. Done is called exactly once, from
// the committing goroutine, after the commit (err nil) or its failure.
type storeWrite struct {
	Apply func(persistence.Tx) error
	Done  func(error)
	// Owner is the session whose lease fences the write in cluster mode (Deps.Cluster), with
	// the Epoch it was started under; "" for writes any node may make (inbound, sent marks).
	Owner string
	Epoch int64
}

// storageStats counts commits and the writes they carried (group-commit efficiency).
var storageStats struct{ commits, writes, nanos atomic.Int64 }

// flight is a running commit. held are the writes it could not commit because the database
// was unreachable (not answered yet), err why; both are set before done is closed.
type flight struct {
	done      chan struct{}
	held      []*storeWrite
	err       error
	stopCheck func() bool // stops the slow-commit check (storage_outage.go); nil: none
}

// committed is Storage's self-message: a batch is durable (or failed, or held).
type committed struct{ f *flight }

// StorageProps is the recipe for the Storage actor.
func StorageProps(store persistence.Store, log zerolog.Logger) *actor.Props {
	return storageProps(store, nil, nil, log)
}

// storageProps is StorageProps fencing writes with cluster (nil: none) and reporting its
// state to health (nil: nowhere).
func storageProps(store persistence.Store, cluster Ownership, health *storageHealth, log zerolog.Logger) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &Storage{store: store, cluster: cluster, health: health, log: log.With().Str("actor", "storage").Logger()}
	}, actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(log)))
}

func (s *Storage) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		s.startPruning(ctx)
	case *storeWrite:
		s.pending = append(s.pending, msg)
		s.flush(ctx)
	case committed:
		s.busy = false
		if msg.f.stopCheck != nil {
			msg.f.stopCheck()
		}
		s.onCommitted(ctx, msg.f) // storage_outage.go
		s.flush(ctx)
	case storageRetryDue:
		s.outage.retry = nil
		s.flush(ctx)
	case *storageCheck:
		s.onCheck(msg)
	case *pruneSeen:
		s.onPruneSeen(ctx, msg)
	case *actor.Restarting, *actor.Stopping:
		// The next instance starts with nothing pending: what this one holds is committed
		// now (or answered with the commit's error), never dropped with the instance.
		s.stopPruning()
		s.outage.stopRetry()
		s.drain()
	}
}

// flush starts a commit of every pending write, after those an outage held, unless one is
// running or the retry after an outage is not due yet.
func (s *Storage) flush(ctx actor.Context) {
	if s.busy || s.outage.retry != nil || len(s.pending)+len(s.outage.held) == 0 {
		return
	}
	batch := append(s.outage.held, s.pending...)
	s.outage.held, s.pending = nil, nil
	s.busy = true
	f := &flight{done: make(chan struct{})}
	s.inflight = f
	s.armCheck(ctx, f)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	go func() {
		defer func() {
			if r := recover(); r != nil {
				err := fmt.Errorf("storage: panic: %v", r)
				s.log.Error().Str("stack", string(debug.Stack())).Err(err).Msg("commit")
				for _, w := range batch {
					w.Done(err)
				}
				f.held = nil
			}
			close(f.done)
			root.Send(self, committed{f: f})
		}()
		f.held, f.err = commit(s.store, s.cluster, batch, s.log)
	}()
}

// commit applies a batch in one transaction. If the batch fails, each write is retried in a
// transaction of its own, so one bad request cannot fail the others. In cluster mode the
// transaction first fences the batch's owners (storage_fence.go): a write whose session's
// lease this node lost is answered ErrFenced and not applied, the others commit. When the
// database cannot be reached (persistence.ErrUnavailable: nothing was kept), the writes not
// answered yet are returned, with the error, for Storage to hold and try again.
func commit(store persistence.Store, cluster Ownership, batch []*storeWrite, log zerolog.Logger) (held []*storeWrite, cause error) {
	storageStats.commits.Add(1)
	storageStats.writes.Add(int64(len(batch)))
	defer func(t time.Time) { storageStats.nanos.Add(int64(time.Since(t))) }(time.Now())
	var lost map[*storeWrite]bool
	err := store.Update(func(tx persistence.Tx) (err error) {
		if lost, err = fence(tx, cluster, batch); err != nil {
			return err
		}
		for _, w := range batch {
			if lost[w] {
				continue
			}
			if err := w.Apply(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, persistence.ErrUnavailable) {
		return batch, err
	}
	if err == nil || len(batch) == 1 {
		if err != nil {
			log.Error().Err(err).Msg("write failed")
		}
		for _, w := range batch {
			w.Done(fencedErr(lost, w, err))
		}
		return nil, nil
	}
	for i, w := range batch {
		one := []*storeWrite{w}
		err := store.Update(func(tx persistence.Tx) (err error) {
			if lost, err = fence(tx, cluster, one); err != nil || lost[w] {
				return err
			}
			return w.Apply(tx)
		})
		if errors.Is(err, persistence.ErrUnavailable) {
			return batch[i:], err
		}
		if err != nil {
			log.Error().Err(err).Msg("write failed")
		}
		w.Done(fencedErr(lost, w, err))
	}
	return nil, nil
}

// drain finishes the running commit and commits what is pending, so neither a clean
// shutdown nor a restart loses a write that reached Storage: every Done is called. It
// blocks: Storage is stopping (it stops last) or restarting (its mailbox is suspended).
// When the database is unreachable it tries for up to drainOutage, then answers the writes
// it still holds with the error: their callers' state stays in the store as it was (an
// inbound message not acknowledged, a run's messages still in the inbox).
func (s *Storage) drain() {
	var batch []*storeWrite
	if s.busy {
		<-s.inflight.done
		// Taken here: the committed message still on its way (to the next instance, after a
		// restart) must not hold these writes again.
		batch, s.inflight.held = s.inflight.held, nil
		s.busy = false
	}
	batch = append(append(batch, s.outage.held...), s.pending...)
	s.outage.held, s.pending = nil, nil
	if len(batch) == 0 {
		return
	}
	defer func() { // a panicking commit must not lose the batch's answers either
		if r := recover(); r != nil {
			err := fmt.Errorf("storage: panic: %v", r)
			s.log.Error().Str("stack", string(debug.Stack())).Err(err).Msg("commit")
			for _, w := range batch {
				w.Done(err)
			}
		}
	}()
	deadline := time.Now().Add(drainOutage)
	for pause := retryFirst; ; pause = min(2*pause, retryMax) {
		held, err := commit(s.store, s.cluster, batch, s.log)
		if batch = held; len(batch) == 0 {
			return
		}
		if time.Now().Add(pause).After(deadline) {
			s.log.Error().Err(err).Int("writes", len(batch)).Msg("storage unavailable at shutdown: writes not kept (what they answer stays to do)")
			for _, w := range batch {
				w.Done(err)
			}
			return
		}
		time.Sleep(pause)
	}
}
