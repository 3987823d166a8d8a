package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
)

// Archiving finished sub-agents, the Router's side. A child's ending schedules its archiving
// in the store (subagent.ScheduleArchive, in the transaction of its last run); the Router
// only keeps the earliest due time it knows of. When a sweep finds it past, one Storage write
// marks the children due archived (subagent.Archive) and answers with them and the next due
// time; the Router then unloads the archived children still live and tells their parents.
// Nothing is kept per child in memory, and a restarted gateway starts with one pass, so
// archiving survives restarts.
//
// A finished child has nothing more to do, so the Router also asks it to passivate as soon as
// its completion is recorded (onSubagentEnded), without waiting for session.idleMinutes: a
// message sent to it later loads it again.

// archiveBatch caps the children one archive write marks; the next sweep takes the rest.
const archiveBatch = 512

type (
	// subagentArchive is the Router's archiving state.
	subagentArchive struct {
		at      time.Time // the earliest due time known; zero: none
		passing bool      // an archive write is in flight
	}
	// archiveDue reports an archive write: the children it archived, the next due time.
	archiveDue struct {
		archived []subagent.Link
		next     time.Time
		err      error
	}
)

// noteArchive remembers that a child is due at due.
func (r *Router) noteArchive(due time.Time) {
	a := &r.archive
	if !due.IsZero() && (a.at.IsZero() || due.Before(a.at)) {
		a.at = due
	}
}

// maybeArchive starts an archive write when a child is due (from the sweep).
func (r *Router) maybeArchive(ctx actor.Context) {
	a := &r.archive
	now := r.deps.now()
	if a.passing || a.at.IsZero() || a.at.After(now) {
		return
	}
	a.passing, a.at = true, time.Time{}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	msg := &archiveDue{}
	ctx.Send(r.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			var err error
			msg.archived, msg.next, err = subagent.Archive(tx, now, archiveBatch)
			return err
		},
		Done: func(err error) {
			msg.err = err
			root.Send(self, msg)
		},
	})
}

// onArchiveDue unloads the archived children that are live and tells their parents.
func (r *Router) onArchiveDue(ctx actor.Context, msg *archiveDue) {
	r.archive.passing = false
	if msg.err != nil {
		r.log.Error().Err(msg.err).Msg("could not archive finished sub-agents; trying again next sweep")
		r.noteArchive(r.deps.now())
		return
	}
	r.noteArchive(msg.next)
	for _, l := range msg.archived {
		if rt := r.sessions[l.Child]; rt != nil {
			r.checkIdle(ctx, rt)
		}
		r.forward(ctx, l.Parent, &subagentMarked{parent: l.Parent, child: l.Child, archived: l.Archived})
	}
	if len(msg.archived) > 0 {
		r.log.Info().Int("children", len(msg.archived)).Msg("archived finished sub-agents")
	}
	if n := len(msg.archived); n == archiveBatch { // more may be due
		r.noteArchive(r.deps.now())
	}
}
