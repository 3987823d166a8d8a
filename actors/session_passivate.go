package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// onIdleCheck answers the Router's idle check (see router_passivate.go) when the Session is
// idle: it may then be stopped and reloaded from Storage later without anyone noticing. A
// busy Session does not answer; it reports idle again when its work is done.
func (s *Session) onIdleCheck(ctx actor.Context, msg *idleCheck) {
	if s.idle() {
		ctx.Send(s.router, &idleConfirmed{key: s.key, token: msg.token})
	}
}

// idle reports whether the Session has nothing in flight that lives only in memory: no run
// (nor one being recorded), no command waiting for a run to end or whose answer is being
// recorded, no /compact waiting, and no queued message (a collect window pending has one).
// It holds whenever maybeStartTurn reports sessionIdle, except while a reply awaits its
// confirmation: the Session then does not confirm, and the Router checks again next sweep.
func (s *Session) idle() bool {
	return s.turn == nil && !s.saving && len(s.deferred) == 0 && len(s.cmp.pending) == 0 &&
		len(s.queue.waiting) == 0 && s.writes == 0 && !s.awaitingSend()
}

// unsentPatience is how long a Session waits for a Connector to confirm a reply before it
// may be passivated anyway: a Connector that restarted lost its queue, and a respawned
// Session sends what the outbox still holds, which is then the retry it needs.
const unsentPatience = 5 * time.Minute

// awaitingSend reports whether a reply handed to a Connector recently is not confirmed yet.
func (s *Session) awaitingSend() bool {
	now := s.deps.now()
	for _, at := range s.unsent {
		if now.Sub(at) < unsentPatience {
			return true
		}
	}
	return false
}
