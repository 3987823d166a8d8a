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
//
// sessionQueue holds these rules and the messages they apply to, without the actor: the
// Session asks it what to do with a message and does it (send it to the Turn, cancel the
// Turn, start a run, schedule a collect wake-up).

// sessionQueue is a Session's accepted messages that wait for a run or were sent to the
// running one, and what the queue modes decided about them.
type sessionQueue struct {
	waiting     []messages.Inbound // accepted messages waiting for a run
	steering    []messages.Inbound // sent to the running Turn, to be taken in at its next boundary
	discard     []uint64           // inbox seqs dropped (queue cap, /stop): deleted with the next write
	dropNotes   []string           // what the queue cap dropped, told to the model in the next run
	lastArrival time.Time          // when the last message queued during a run arrived (collect)
	interrupted bool               // the running Turn was cancelled for a newer message: no "Stopped."
}

// queueSettingsFor resolves the queue settings for messages on a channel.
type queueSettingsFor func(channel string) persistence.QueueSettings

// runState is what a Session is doing when a message arrives.
type runState struct {
	idle          bool // no run, none being recorded, no command waiting: the message can start one
	collecting    bool // idle, and collect mode holds waiting messages back until a quiet window
	turn          bool // a Turn is running: it can take the message in (steer) or be cancelled
	interruptible bool // the running Turn answers messages (a /compact is never interrupted)
	// mayJoin: the message's sender may use every tool the running Turn may, so it may steer
	// it; a guest's message never joins a run that has the owner's tools, it waits instead.
	mayJoin bool
}

// arrival is what the Session does with a message after sessionQueue.arrive.
type arrival int

const (
	arrivalWait      arrival = iota // it waits in the queue (or the cap dropped one)
	arrivalSteer                    // send it to the running Turn
	arrivalInterrupt                // it waits; cancel the running Turn
)

// arrive queues a message by the queue mode, and reports what the Session must do with it
// and whether the cap dropped a message (this one or the oldest waiting). now is read only
// when the arrival time matters (collect).
func (q *sessionQueue) arrive(in messages.Inbound, settings queueSettingsFor, now func() time.Time, run runState) (act arrival, dropped bool) {
	set := settings(in.Channel)
	if run.idle {
		if run.collecting { // collect mode is waiting for quiet: this message extends the wait
			q.lastArrival = now()
		}
		return arrivalWait, q.add(in, set)
	}
	q.lastArrival = now()
	if run.turn && !in.System {
		switch set.Mode {
		case QueueSteer:
			if q.len() < set.Cap && run.mayJoin {
				q.steering = append(q.steering, in)
				return arrivalSteer, false
			}
		case QueueInterrupt:
			if !q.interrupted && run.interruptible {
				q.interrupted = true
				act = arrivalInterrupt
			}
		}
	}
	return act, q.add(in, set)
}

// add queues in, dropping a message by the drop policy when the queue is full. It reports
// whether it dropped one.
func (q *sessionQueue) add(in messages.Inbound, set persistence.QueueSettings) (dropped bool) {
	if q.len() >= set.Cap {
		if set.Drop == DropNew || len(q.waiting) == 0 {
			q.drop(in, set.Drop == DropSummarize)
			return true
		}
		q.drop(q.waiting[0], set.Drop == DropSummarize)
		q.waiting = q.waiting[1:]
		dropped = true
	}
	q.waiting = append(q.waiting, in)
	return dropped
}

// restore queues a message accepted before the Session started (its inbox); the cap does not
// apply to what was already accepted.
func (q *sessionQueue) restore(in messages.Inbound) {
	q.waiting = append(q.waiting, in)
}

// drop forgets a waiting message: its inbox entry goes with the next write, and with note
// the model is told what it said.
func (q *sessionQueue) drop(in messages.Inbound, note bool) {
	if in.InboxSeq != 0 {
		q.discard = append(q.discard, in.InboxSeq)
	}
	if note {
		q.dropNotes = append(q.dropNotes, "- "+oneLine(in.Text, 200))
	}
}

// dropAll drops every waiting and steered message without a note (/stop, /new).
func (q *sessionQueue) dropAll() {
	for _, in := range append(q.steering, q.waiting...) {
		if in.InboxSeq != 0 {
			q.discard = append(q.discard, in.InboxSeq)
		}
	}
	q.steering, q.waiting, q.dropNotes = nil, nil, nil
}

// len is the number of messages waiting or sent to the running Turn (/status, the cap).
func (q *sessionQueue) len() int { return len(q.waiting) + len(q.steering) }

// take removes and returns the messages the next run answers: in followup mode (of the
// first waiting message's channel) one message, otherwise all of them. The queue must not
// be empty.
func (q *sessionQueue) take(settings queueSettingsFor) []messages.Inbound {
	if settings(q.waiting[0].Channel).Mode == QueueFollowup {
		run := q.waiting[:1:1]
		q.waiting = q.waiting[1:]
		return run
	}
	run := q.waiting
	q.waiting = nil
	return run
}

// holdFor is how long collect mode (of the last waiting message's channel) still holds the
// waiting messages back: the rest of the debounce window since the last message that
// arrived during a run, or 0 when the next run may start. The queue must not be empty; now
// is read only in collect mode.
func (q *sessionQueue) holdFor(settings queueSettingsFor, now func() time.Time) time.Duration {
	set := settings(q.waiting[len(q.waiting)-1].Channel)
	if set.Mode != QueueCollect || q.lastArrival.IsZero() || set.Debounce <= 0 {
		return 0
	}
	return max(time.Duration(set.Debounce)*time.Millisecond-now().Sub(q.lastArrival), 0)
}

// requeueSteered puts the steered messages the finished run did not take in back at the
// head of the queue; the ones it took in are answered by it.
func (q *sessionQueue) requeueSteered(injected []messages.Inbound) {
	taken := map[uint64]bool{}
	for _, in := range injected {
		taken[in.InboxSeq] = true
	}
	var left []messages.Inbound
	for i, in := range q.steering {
		if (in.InboxSeq != 0 && !taken[in.InboxSeq]) || (in.InboxSeq == 0 && i >= len(injected)) {
			left = append(left, in)
		}
	}
	q.waiting = append(left, q.waiting...)
	q.steering = nil
}

// takeDiscarded returns the inbox seqs of dropped messages, for the next write to delete.
func (q *sessionQueue) takeDiscarded() []uint64 {
	seqs := q.discard
	q.discard = nil
	return seqs
}

// takeDropNotes returns the notes of what the cap dropped, for the next run to open with.
func (q *sessionQueue) takeDropNotes() []string {
	notes := q.dropNotes
	q.dropNotes = nil
	return notes
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

// The Session's side: it applies what the queue decided.

// collectDue wakes a Session in collect mode when its quiet window may have passed.
type collectDue struct{}

// queueSettings resolves the queue settings for messages on channel.
func (s *Session) queueSettings(channel string) persistence.QueueSettings {
	return s.deps.session().queueFor(channel, s.info.Queue)
}

// onMessage starts a run for a message, or queues it by the queue mode when a run is active,
// and reports what it did with it.
func (s *Session) onMessage(ctx actor.Context, in messages.Inbound) arrival {
	run := runState{
		idle:          s.turn == nil && !s.saving && len(s.deferred) == 0,
		collecting:    s.collect != nil,
		turn:          s.turn != nil,
		interruptible: len(s.turnUser) > 0,
	}
	// A message with files waits for a run of its own, which downloads them first (turn_media.go).
	run.mayJoin = run.turn && s.toolPolicy(in).Covers(s.turnTools) && len(in.Media) == 0
	act, dropped := s.queue.arrive(in, s.queueSettings, s.deps.now, run)
	if dropped {
		s.log.Info().Str("session", s.key).Bool("summarized", s.queueSettings(in.Channel).Drop == DropSummarize).
			Msg("queue full: message dropped")
	}
	switch act {
	case arrivalSteer:
		ctx.Send(s.turn, &steerMessage{in: in})
	case arrivalInterrupt:
		ctx.Send(s.turn, &cancelTurn{})
	}
	if run.idle {
		s.maybeStartTurn(ctx)
	}
	return act
}

// dropWaiting drops every waiting message without a note (/stop, /new), and so the wait for
// the model they were in (session_outage.go).
func (s *Session) dropWaiting(ctx actor.Context) {
	s.queue.dropAll()
	s.stopCollect()
	if s.wait != nil && s.turn == nil { // a running run ends the wait when it is recorded
		s.dropWait(ctx)
	}
}

// waitForQuiet reports whether collect mode holds the queued messages back because the last
// one arrived less than the debounce window ago; it then schedules a wake-up.
func (s *Session) waitForQuiet(ctx actor.Context) bool {
	wait := s.queue.holdFor(s.queueSettings, s.deps.now)
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
