package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Passivation: a Session with no traffic for IdleAfter is stopped, and the next message for
// its key spawns a fresh one that reloads the conversation from Storage.
//
// The Router must never stop a Session that has a message it has not handled: the message
// would wait in Storage's inbox until the next gateway start. The handshake:
//
//  1. A Session reports sessionIdle when it has no run and nothing queued (sessionBusy when a
//     run starts). The Router notes the time.
//  2. A sweep finds sessions that reported idle at least IdleAfter ago and sends each an
//     idleCheck with a fresh token, noting how many messages it had forwarded to it.
//  3. Mailboxes are FIFO, so the Session handles the check after every message forwarded
//     before it. If it is still idle then, it answers idleConfirmed with the token.
//  4. The Router stops the Session only if the token is the latest it sent and nothing was
//     forwarded since the check; it removes the key at once, so a later message spawns a
//     new Session instead of reaching the stopping one.
//
// Nothing here counts what a Session received, so a Session restarted by its supervisor (a
// fresh instance that knows nothing of what the previous one received) passivates like any
// other. A check lost in a crash is sent again by the next sweep.

// Passivation messages between the Router and a Session.
type (
	idleCheck     struct{ token uint64 }
	idleConfirmed struct {
		key   string
		token uint64
	}
)

// compactMin is the size below which the Router never rebuilds its maps.
const compactMin = 1024

// onSweep sends an idle check to every session idle for longer than IdleAfter.
func (r *Router) onSweep(ctx actor.Context) {
	idleAfter := r.deps.session().withDefaults().IdleAfter
	now := r.deps.now()
	for _, rt := range r.sessions {
		if rt.idleSince.IsZero() || now.Sub(rt.idleSince) < idleAfter {
			continue
		}
		r.checkIdle(ctx, rt)
	}
	r.maybeArchive(ctx) // finished sub-agents due (subagent_archive.go)
}

// checkIdle sends the Session an idle check with a fresh token.
func (r *Router) checkIdle(ctx actor.Context, rt *route) {
	r.checks++
	rt.check, rt.checkedAt = r.checks, rt.forwarded
	ctx.Send(rt.pid, &idleCheck{token: r.checks})
}

// onIdleConfirmed stops a Session that confirmed the latest check and was sent nothing since.
func (r *Router) onIdleConfirmed(ctx actor.Context, msg *idleConfirmed) {
	rt := r.sessions[msg.key]
	if rt == nil || rt.check != msg.token || rt.forwarded != rt.checkedAt || rt.idleSince.IsZero() {
		return
	}
	ctx.Poison(rt.pid)
	delete(r.sessions, msg.key)
}

// compact rebuilds the Router's maps once they hold a quarter of what they held at their
// largest: Go maps keep their buckets after deletes, so 100,000 conversations that spoke
// once and passivated would otherwise pin megabytes for the life of the process. Each
// rebuild follows at least three times as many deletions as it copies entries.
func (r *Router) compact() {
	n := len(r.byPID)
	if r.high < compactMin || n > r.high/4 {
		return
	}
	sessions := make(map[string]*route, len(r.sessions))
	for k, rt := range r.sessions {
		sessions[k] = rt
	}
	byPID := make(map[string]string, n)
	for id, k := range r.byPID {
		byPID[id] = k
	}
	r.sessions, r.byPID, r.high = sessions, byPID, n
}

// startTicker sends sweep to the Router every quarter of IdleAfter (at most every 30 s).
func (r *Router) startTicker(ctx actor.Context) {
	every := min(r.deps.Session.withDefaults().IdleAfter/4, 30*time.Second)
	r.stopTicker = tickSelf(ctx, every, &sweep{})
}

// tickSelf sends msg to the actor every period until stop is called, from a goroutine that
// stop ends.
func tickSelf(ctx actor.Context, every time.Duration, msg any) (stop func()) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	t := time.NewTicker(every)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
				root.Send(self, msg)
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}
