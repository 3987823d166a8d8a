package actors

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/internal/explain"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// A database that cannot be reached (PostgreSQL down, restarting, failing over, the network
// to it broken: persistence.ErrUnavailable) is a storage outage, handled like a model
// outage: nothing is dropped, everybody waits. Storage keeps the writes the database could
// not take, unanswered, and tries them again with backoff (100 ms doubling to 500 ms),
// together with the writes that arrive meanwhile, in their order, until the database takes
// them; only then are their callers answered. So a Connector does not acknowledge an inbound
// message to its platform (its intake waits for the write), a Session's run waits to be
// recorded before its reply goes out, and a reply sent just before is marked sent once the
// database is back. The outage is logged once when it begins and once when it ends, and
// Runtime.StorageHealth reports it (reef status, /readyz, reef_storage_up).

const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 500 * time.Millisecond
	// drainOutage bounds how long a stopping Storage tries a database that is unreachable.
	drainOutage = 5 * time.Second
)

// outage is Storage's state while the database is unreachable.
type outage struct {
	since  time.Time     // zero: the database answers
	held   []*storeWrite // not committed yet, in their order; committed first when it is back
	pause  time.Duration // before the next attempt
	retry  func() bool   // stops the pending retry timer; nil when none is pending
	writes int           // writes that waited, for the log line at the end
}

// storageRetryDue is Storage's self-message: try the held writes again.
type storageRetryDue struct{}

// onCommitted handles the end of a commit: writes the database could not take are held and
// tried again after a pause; a commit after an outage ends it.
func (s *Storage) onCommitted(ctx actor.Context, f *flight) {
	o := &s.outage
	if len(f.held) == 0 {
		if !o.since.IsZero() {
			s.log.Warn().Str("outage", time.Since(o.since).Round(time.Millisecond).String()).Int("writes", o.writes).
				Msg("storage is back: the writes that waited are committed")
			*o = outage{}
		}
		if s.health.down() { // also after a restart of Storage during an outage
			s.health.set(StorageHealth{Up: true})
		}
		return
	}
	o.held = f.held
	if o.since.IsZero() {
		o.since, o.pause = time.Now(), retryFirst
		s.log.Warn().Err(f.err).Int("writes", len(f.held)).
			Msg("storage unavailable: writes wait (inbound messages are not acknowledged, replies wait) until the database is back")
	} else {
		o.pause = min(2*o.pause, retryMax)
	}
	o.writes = max(o.writes, len(f.held))
	s.health.set(StorageHealth{Since: o.since, Reason: explain.Short(f.err, "the database"), Waiting: len(f.held) + len(s.pending)})
	self, root := ctx.Self(), ctx.ActorSystem().Root
	t := time.AfterFunc(o.pause, func() { root.Send(self, storageRetryDue{}) })
	o.retry = t.Stop
}

// slowCommit is how long a commit may run before Storage asks the store whether the
// database is out of reach (a commit waiting to learn whether the database took it).
const slowCommit = 2 * time.Second

// storageCheck is Storage's self-message: flight f has run for slowCommit.
type storageCheck struct{ f *flight }

// armCheck has Storage look at flight f after slowCommit, when the store can tell.
func (s *Storage) armCheck(ctx actor.Context, f *flight) {
	if s.health == nil || s.health.reach == nil {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	t := time.AfterFunc(slowCommit, func() { root.Send(self, &storageCheck{f: f}) })
	f.stopCheck = t.Stop
}

// onCheck begins the outage when a commit still runs while the store finds the database
// unreachable: logged and shown as if the commit had failed; its end is the commit's end.
func (s *Storage) onCheck(msg *storageCheck) {
	o := &s.outage
	if !s.busy || s.inflight != msg.f || !o.since.IsZero() {
		return
	}
	since, err := s.health.unreachable()
	if since.IsZero() {
		return
	}
	o.since, o.pause = since, retryFirst
	s.log.Warn().Err(err).Msg("storage unavailable: writes wait (inbound messages are not acknowledged, replies wait) until the database is back")
	s.health.set(StorageHealth{Since: since, Reason: explain.Short(err, "the database"), Waiting: len(s.pending)})
}

// stopRetry stops a pending retry timer.
func (o *outage) stopRetry() {
	if o.retry != nil {
		o.retry()
		o.retry = nil
	}
}

// StorageHealth is the state of the store as Storage last found it.
type StorageHealth struct {
	Up      bool
	Since   time.Time // down: when the outage began
	Reason  string    // down: why, in plain words ("the database refused the connection")
	Waiting int       // down: writes waiting for the database
}

// storageHealth is where Storage publishes its state; Runtime.StorageHealth reads it. reach
// is the store's own view (persistence.Reachability, nil for bbolt): a commit that waits to
// learn whether the database took it shows the outage only there.
type storageHealth struct {
	p     atomic.Pointer[StorageHealth]
	reach persistence.Reachability
}

// watch notes the store's Reachability, if it has one; called before the tree starts.
func (h *storageHealth) watch(store persistence.Store) {
	h.reach, _ = store.(persistence.Reachability)
}

// unreachable is the store's own view of an outage (zero: none or not known).
func (h *storageHealth) unreachable() (time.Time, error) {
	if h == nil || h.reach == nil {
		return time.Time{}, nil
	}
	return h.reach.Unreachable()
}

func (h *storageHealth) set(v StorageHealth) {
	if h != nil {
		h.p.Store(&v)
	}
}

// down reports whether Storage is waiting for an unreachable database.
func (h *storageHealth) down() bool {
	if h == nil {
		return false
	}
	if v := h.p.Load(); v != nil && !v.Up {
		return true
	}
	since, _ := h.unreachable()
	return !since.IsZero()
}

// StorageHealth returns the state of the store: up unless Storage found the database
// unreachable and has not committed since.
func (rt *Runtime) StorageHealth() StorageHealth {
	if v := rt.deps.storage.p.Load(); v != nil && !v.Up {
		return *v
	}
	if since, err := rt.deps.storage.unreachable(); !since.IsZero() {
		return StorageHealth{Since: since, Reason: explain.Short(err, "the database")}
	}
	return StorageHealth{Up: true}
}

// viewWaiting is store.View, run again while the database is unreachable (after retryFirst,
// doubling to retryMax) until it answers or the store is closed: a read that cannot be done
// waits like a write, so that a Session loading its state, or an intake checking a sender,
// does not go on as if the store were empty. It blocks its caller for the outage.
func viewWaiting(store persistence.Store, fn func(persistence.Reader) error) error {
	for pause := retryFirst; ; pause = min(2*pause, retryMax) {
		err := store.View(fn)
		if !errors.Is(err, persistence.ErrUnavailable) {
			return err
		}
		time.Sleep(pause)
	}
}

// waitForStorage holds a reply of the outbox, in cluster mode, while the database is
// unreachable: a reply sent then could not be marked sent before the session's lease lapses,
// and the node that takes the session after the outage would send it again (Telegram has no
// idempotency key). After the outage the reply goes out if the session is still this
// node's, and is left in the outbox for its new owner otherwise (Connector.moved). On one
// node replies go out during an outage; only their sent marks wait.
func (c *Connector) waitForStorage(ctx context.Context, out *messages.Outbound) {
	if c.deps.Cluster == nil || out.OutboxSeq == 0 {
		return
	}
	for c.deps.storage.down() && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(retryFirst):
		}
	}
}
