package actors

import (
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Queue modes decide what happens to a message that arrives while a run is active:
//   - steer (default): the running Turn takes it in at its next boundary — after the tool
//     calls in flight, or instead of tool calls the model asked for but that have not started;
//   - followup: it waits, and gets a run of its own after the current one;
//   - collect: it waits, and everything that waited gets one run once no message came for
//     the debounce window;
//   - interrupt: the current run is stopped (its partial work is kept, no "Stopped." is sent)
//     and the waiting messages get the next run.
//
// At most Cap messages wait; the drop policy says which one goes when another arrives:
// the oldest (old), the newest (new), or the oldest with a one-line note of what it said
// given to the model in the next run (summarize). System events (cron, heartbeats) never
// steer or interrupt a run; they wait.

// collectDue wakes a Session in collect mode when its quiet window may have passed.
type collectDue struct{}

// queueSettings resolves the queue settings for messages on channel.
func (s *Session) queueSettings(channel string) persistence.QueueSettings {
	return s.deps.Session.queueFor(channel, s.info.Queue)
}

// onMessage starts a run for a message, or queues it by the queue mode when a run is active.
func (s *Session) onMessage(ctx actor.Context, in messages.Inbound) {
	if s.turn == nil && !s.saving && len(s.deferred) == 0 {
		if s.collect != nil { // collect mode is waiting for quiet: this message extends the wait
			s.lastArrival = s.deps.now()
		}
		s.push(in, s.queueSettings(in.Channel))
		s.maybeStartTurn(ctx)
		return
	}
	q := s.queueSettings(in.Channel)
	s.lastArrival = s.deps.now()
	if s.turn != nil && !in.System {
		switch q.Mode {
		case QueueSteer:
			if len(s.steering)+len(s.queue) < q.Cap {
				s.steering = append(s.steering, in)
				ctx.Send(s.turn, &steerMessage{in: in})
				return
			}
		case QueueInterrupt:
			if !s.interrupted && len(s.turnUser) > 0 { // a /compact is not interrupted
				s.interrupted = true
				ctx.Send(s.turn, &cancelTurn{})
			}
		}
	}
	s.push(in, q)
}

// push queues in, dropping a message by the drop policy when the queue is full.
func (s *Session) push(in messages.Inbound, q persistence.QueueSettings) {
	if len(s.steering)+len(s.queue) >= q.Cap {
		if q.Drop == DropNew || len(s.queue) == 0 {
			s.drop(in, q.Drop == DropSummarize)
			return
		}
		s.drop(s.queue[0], q.Drop == DropSummarize)
		s.queue = s.queue[1:]
	}
	s.queue = append(s.queue, in)
}

// drop forgets a waiting message: its inbox entry goes with the next write, and with note
// the model is told what it said.
func (s *Session) drop(in messages.Inbound, note bool) {
	if in.InboxSeq != 0 {
		s.discard = append(s.discard, in.InboxSeq)
	}
	if note {
		s.dropNotes = append(s.dropNotes, "- "+oneLine(in.Text, 200))
	}
	s.log.Info().Str("session", s.key).Bool("summarized", note).Msg("queue full: message dropped")
}

// dropWaiting drops every waiting message without a note (/stop, /new).
func (s *Session) dropWaiting() {
	for _, in := range append(s.steering, s.queue...) {
		if in.InboxSeq != 0 {
			s.discard = append(s.discard, in.InboxSeq)
		}
	}
	s.steering, s.queue, s.dropNotes = nil, nil, nil
	s.stopCollect()
}

// takeRun splits the queue into the messages the next run answers and those that wait:
// in followup mode one message per run, otherwise all of them.
func (s *Session) takeRun() (run, rest []messages.Inbound) {
	if s.queueSettings(s.queue[0].Channel).Mode == QueueFollowup {
		return s.queue[:1:1], s.queue[1:]
	}
	return s.queue, nil
}

// waitForQuiet reports whether collect mode holds the queued messages back because the last
// one arrived less than the debounce window ago; it then schedules a wake-up.
func (s *Session) waitForQuiet(ctx actor.Context) bool {
	q := s.queueSettings(s.queue[len(s.queue)-1].Channel)
	if q.Mode != QueueCollect || s.lastArrival.IsZero() || q.Debounce <= 0 {
		return false
	}
	wait := time.Duration(q.Debounce)*time.Millisecond - s.deps.now().Sub(s.lastArrival)
	if wait <= 0 {
		return false
	}
	s.stopCollect()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s.collect = s.deps.clock().AfterFunc(wait, func() { root.Send(self, &collectDue{}) })
	return true
}

func (s *Session) onCollectDue(ctx actor.Context, _ *collectDue) {
	s.collect = nil
	s.maybeStartTurn(ctx)
}

func (s *Session) stopCollect() {
	if s.collect != nil {
		s.collect()
		s.collect = nil
	}
}

// requeueSteered puts the steered messages the finished run did not take in back at the
// head of the queue; the ones it took in are answered by it.
func (s *Session) requeueSteered(injected []messages.Inbound) {
	taken := map[uint64]bool{}
	for _, in := range injected {
		taken[in.InboxSeq] = true
	}
	var left []messages.Inbound
	for i, in := range s.steering {
		if (in.InboxSeq != 0 && !taken[in.InboxSeq]) || (in.InboxSeq == 0 && i >= len(injected)) {
			left = append(left, in)
		}
	}
	s.queue = append(left, s.queue...)
	s.steering = nil
}

// oneLine shortens text to one line of at most n runes.
func oneLine(text string, n int) string {
	return capRunes(strings.Join(strings.Fields(text), " "), n)
}

// describeQueue is the /status and /queue line for q.
func describeQueue(q persistence.QueueSettings, waiting int) string {
	s := fmt.Sprintf("%s, %d waiting (cap %d, drop %s", q.Mode, waiting, q.Cap, q.Drop)
	if q.Mode == QueueCollect {
		s += fmt.Sprintf(", debounce %s", time.Duration(max(q.Debounce, 0))*time.Millisecond)
	}
	return s + ")"
}
