package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
)

// Follow-ups, the parent's side. More work for a child of mode "session" (subagents steer,
// sessions_send without waiting) is put in the child's inbox in one write with its count in
// the child's link (subagent.FollowUp); a child that ended is marked active again there, and
// the Router runs it behind the gateway-wide gate like a new child (startSubagent).
//
// The parent counts the child as working from the moment it sends until the completion of
// the run that answers the follow-up: while the write is in flight (sending), and after it
// until a completion reports at least as many follow-ups as the parent knows of, with none
// waiting for the child's next run (onSubagentDone). So every completion finds the parent's
// count of running children right, whichever of the child's end and the follow-up's write
// commits first.

// followUpStored reports the follow-up's write to the parent: the child's follow-up count,
// and whether it had ended and runs again.
type followUpStored struct {
	by          *Session
	child       string
	followUps   int
	reactivated bool
	at          time.Time
	err         error
}

// sendFollowUp sends in to l, a child of mode "session" not archived, and has the Router run
// it; done, when set, hears whether it was stored.
func (s *Session) sendFollowUp(ctx actor.Context, l *subagent.Link, in messages.Inbound, done func(error)) {
	if s.subs.sending == nil {
		s.subs.sending = map[string]int{}
	}
	s.subs.sending[l.Child]++
	key, now := l.Child, s.deps.now()
	self, root, router := ctx.Self(), ctx.ActorSystem().Root, s.router
	msg := &followUpStored{by: s, child: key, at: now}
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			was, _, err := subagent.Get(tx, key)
			if err != nil {
				return err
			}
			l, err := subagent.FollowUp(tx, key, now)
			if err != nil {
				return err
			}
			msg.followUps, msg.reactivated = l.FollowUps, !was.Active()
			in.InboxSeq, err = tx.AppendInbox(key, in)
			return err
		},
		Done: func(err error) {
			msg.err = err
			root.Send(self, msg) // before the child can run it: its completion comes after
			if err == nil {
				root.Send(router, &startSubagent{key: key, in: &in})
			}
			if done != nil {
				done(err)
			}
		},
	})
}

// onFollowUpStored takes in the follow-up's count, and a child that ended as running again.
func (s *Session) onFollowUpStored(msg *followUpStored) {
	if msg.by == s {
		if s.subs.sending[msg.child]--; s.subs.sending[msg.child] <= 0 {
			delete(s.subs.sending, msg.child)
		}
		if len(s.subs.sending) == 0 {
			s.subs.sending = nil // a parent with many children keeps no map between follow-ups
		}
	}
	if msg.err != nil {
		s.log.Error().Err(msg.err).Str("session", s.key).Str("child", msg.child).Msg("could not send the sub-agent its follow-up")
		return
	}
	for _, l := range s.subs.children {
		if l.Child != msg.child {
			continue
		}
		l.FollowUps = max(l.FollowUps, msg.followUps)
		if msg.reactivated && !l.Active() {
			l.Status, l.Why, l.Ended, l.RunStarted = messages.SubagentRunning, "", time.Time{}, msg.at
		}
	}
}

// childActive reports whether the parent counts the child l as working: it runs or waits for
// a slot, or a follow-up to it is being stored.
func (s *Session) childActive(l *subagent.Link) bool {
	return l.Active() || s.subs.sending[l.Child] > 0
}

// childStatus is how lists show the child l.
func (s *Session) childStatus(l *subagent.Link) string {
	if !l.Active() && s.subs.sending[l.Child] > 0 {
		return messages.SubagentRunning
	}
	return l.Status
}

// childDone takes the completion done of the child l in: the run's status, unless the child
// is still working (follow-ups wait for its next run, or the parent sent one the run did not
// know of). A completion older than what the Session loaded changes nothing but the counts.
func childDone(l *subagent.Link, done *messages.SubagentDone, at time.Time) {
	if done.Run == 0 || done.Run > l.Runs { // not yet in the link this Session loaded
		l.Usage = l.Usage.Add(done.Usage) // the run's
	}
	if done.Run != 0 && done.Run < l.Runs {
		return
	}
	l.Runs = max(l.Runs, done.Run)
	l.FollowUps = max(l.FollowUps, done.FollowUps)
	if done.Pending > 0 || done.FollowUps < l.FollowUps {
		if !l.Active() {
			l.Status = messages.SubagentRunning
		}
		l.Why, l.Ended = "", time.Time{}
		return
	}
	l.Status, l.Why, l.Ended = done.Status, done.Why, at
}
