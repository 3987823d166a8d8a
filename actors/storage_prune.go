package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
)

// The dedup record (persistence MarkSeen) tells a platform's redelivery from a new message.
// It only has to outlive every platform's redelivery window: Feishu redelivers an event for
// about 7 hours, Telegram keeps an unconfirmed update for 24 hours, Discord replays only
// within a session. Storage prunes it on a timer, in short transactions of pruneBatch ids
// each, so the pruning never holds the writer long.

// DedupRetention is how long a dedup id is kept after it was first seen.
const DedupRetention = 48 * time.Hour

// pruneEvery is how often Storage prunes the dedup record (and once when it starts).
const pruneEvery = time.Hour

// pruneBatch is how many dedup ids one pruning transaction looks at (a var for tests).
var pruneBatch = 1000

// pruneSeen is Storage's self-message: prune the dedup record from id from on.
type pruneSeen struct {
	from    string
	removed int // so far in this pass
}

// startPruning prunes now and every pruneEvery until Storage stops, from a goroutine it owns.
func (s *Storage) startPruning(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(pruneEvery)
		defer t.Stop()
		for {
			root.Send(self, &pruneSeen{})
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	s.stopPrune = func() { close(done) }
}

func (s *Storage) stopPruning() {
	if s.stopPrune != nil {
		s.stopPrune()
		s.stopPrune = nil
	}
}

// onPruneSeen queues one pruning transaction, which joins the next group commit; when it
// looked at pruneBatch ids, the next one follows after the commit.
func (s *Storage) onPruneSeen(ctx actor.Context, msg *pruneSeen) {
	cutoff := time.Now().Add(-DedupRetention)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	from, before := msg.from, msg.removed // the closures run on the commit goroutine
	var removed int
	var next string
	s.pending = append(s.pending, &storeWrite{
		Apply: func(tx persistence.Tx) (err error) {
			removed, next, err = tx.PruneSeen(cutoff, from, pruneBatch)
			return err
		},
		Done: func(err error) {
			switch {
			case err != nil:
				s.log.Warn().Err(err).Msg("pruning the dedup record failed; it is tried again later")
			case next != "":
				root.Send(self, &pruneSeen{from: next, removed: before + removed})
			case before+removed > 0:
				s.log.Debug().Int("removed", before+removed).Str("olderThan", DedupRetention.Round(time.Millisecond).String()).Msg("dedup record pruned")
			}
		},
	})
	s.flush(ctx)
}
