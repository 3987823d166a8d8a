package actors

import (
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
)

// Sub-agents, the child's side. A child is an ordinary Session whose first inbox entry is its
// task (a System event with its standing). The run that answers the task ends the child's
// job: onTurnFinished records it together with the child's updated link and the completion
// in the parent's inbox (subagentEnding.put, in the same transaction), and after the commit
// the Router releases the child's slot and hands the completion to the parent.
//
// A child of mode "session" takes follow-ups from its parent, each counted in its link
// (subagent.FollowUp) in the transaction that puts it in the child's inbox. Every run that
// answers its job ends with one completion; put reads, in the same transaction, the
// follow-ups still waiting in the child's inbox: while some do, the child stays running and
// keeps its slot, and the completion says so (Pending), so its parent counts it as working.

type (
	// subagentEnding is a child's finished job run, recorded with the run. put fills in what
	// it read in the store: the link as stored, the completion, the follow-ups left.
	subagentEnding struct {
		link    *subagent.Link // nil: the run ends no child's job; else the link after the run
		run     subagent.Link  // what the completion reports: this run's status, tokens, number
		answer  string         // the run's answer (capped, redacted)
		stop    bool           // it was stopped: the follow-ups waiting for it are dropped
		now     time.Time
		replies []interReply // answers to sessions_send callers that wait (subagent_send.go)
		shared  bool         // cluster mode: the replies go to the senders' inboxes too (putReplies)

		stored     *subagent.Link   // the link put stored
		completion messages.Inbound // put's completion, InboxSeq set
		pending    int              // follow-ups waiting for the next run: the child goes on
		dropped    uint64           // highest inbox seq of a follow-up dropped with a stop
	}
	// stopSubagent asks a child to stop its run and its own children's (kill, /stop cascade).
	stopSubagent struct{ key string }
	// subagentEnded tells the Router a child's run ended with the durable completion to hand
	// to its parent; the child no longer needs its slot unless more is set (follow-ups wait
	// for its next run).
	subagentEnded struct {
		key        string
		completion *messages.Inbound
		archiveDue time.Time // when the child is to be archived (zero: not scheduled)
		more       bool
	}
)

// maxWhy caps the reason of a failed child, in bytes.
const maxWhy = 300

// isTask reports whether in is a sub-agent's task.
func isTask(in messages.Inbound) bool {
	return in.System && strings.HasPrefix(in.Source, "subagent-task:")
}

// runTimeout is the limit of the next run: the child's run timeout when it answers its task.
func (s *Session) runTimeout() time.Duration {
	if s.subs.self == nil {
		return 0
	}
	for _, in := range s.answering {
		if isTask(in) || s.isFollowUp(in) {
			return s.subs.self.RunTimeout
		}
	}
	return 0
}

// isFollowUp reports whether in is more work for a child of mode "session" from its parent
// (subagents steer, sessions_send without waiting): a run that answers it ends with a
// completion of its own.
func (s *Session) isFollowUp(in messages.Inbound) bool {
	return s.subs.self != nil && s.subs.self.IsFollowUp(in)
}

// droppedFollowUp reports whether in is a follow-up a stop dropped from the inbox (put): it
// may still reach the Session after that, and must not start a run.
func (s *Session) droppedFollowUp(in messages.Inbound) bool {
	return in.InboxSeq != 0 && in.InboxSeq <= s.subs.droppedTo && s.isFollowUp(in)
}

// followUpStarts takes the start of a run that answers a follow-up (hook in maybeStartTurn).
// The parent marked the child active when it sent the follow-up (subagent.FollowUp); a live
// Session that still holds the ended link marks it running here too, so the run's end records
// a completion like the first (and, for a follow-up stored without that mark, in the store).
func (s *Session) followUpStarts(ctx actor.Context) {
	self := s.subs.self
	if self == nil || self.Active() || !slices.ContainsFunc(s.answering, s.isFollowUp) {
		return
	}
	now := s.deps.now()
	l := *self
	l.Status, l.Why, l.Ended, l.Archived, l.ArchiveDue, l.RunStarted = messages.SubagentRunning, "", time.Time{}, time.Time{}, time.Time{}, now
	s.subs.self, s.subs.stopping = &l, false // a new job: an earlier stop is over
	log, key := s.log, s.key
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error { return subagent.Resume(tx, key, now) },
		Done: func(err error) {
			if err != nil { // the run's end records the link again
				log.Error().Err(err).Str("session", key).Msg("could not mark the sub-agent running again")
			}
		},
	})
}

// subagentEnd builds the ending of a child's task run (hook in onTurnFinished), or nil when
// the run is not one: the session is no sub-agent, the run did not answer the task, or the
// child already ended.
func (s *Session) subagentEnd(msg *turnFinished, info persistence.SessionInfo, now time.Time) *subagentEnding {
	replies := s.interReplies(msg)
	self := s.subs.self
	if self == nil || !self.Active() || !s.answersJob(s.answering) || s.waitsForChildren(msg) {
		if len(replies) > 0 {
			return &subagentEnding{replies: replies, now: now, shared: s.deps.Cluster != nil}
		}
		return nil
	}
	l := *self
	l.Ended, l.Usage, l.Runs = now, info.Usage, self.Runs+1
	if l.ArchiveAfter <= 0 { // a link stored before it was recorded there
		l.ArchiveAfter = s.agent.Subagents.withDefaults().ArchiveAfter
	}
	switch {
	case msg.cancelled || s.subs.stopping:
		l.Status = messages.SubagentStopped
	case errors.Is(msg.err, errTurnTimeout):
		l.Status = messages.SubagentTimedOut
	case msg.err != nil:
		l.Status = messages.SubagentFailed
		l.Why = capBytes(s.deps.redactor().apply(msg.err.Error()), maxWhy)
	default:
		l.Status = messages.SubagentCompleted
	}
	answer := msg.reply
	if msg.cancelled {
		answer = ""
	}
	l.Answer = capBytes(s.deps.redactor().apply(answer), subagent.MaxAnswer)
	run := l // the completion reports this run: its tokens, not the session's since its spawn
	run.Usage = usageSince(info.Usage, self.Usage)
	return &subagentEnding{link: &l, run: run, answer: l.Answer, stop: l.Status == messages.SubagentStopped, now: now, replies: replies,
		shared: s.deps.Cluster != nil}
}

// usageSince is the usage of now less what it was before.
func usageSince(now, before messages.Usage) messages.Usage {
	return messages.Usage{InputTokens: now.InputTokens - before.InputTokens, OutputTokens: now.OutputTokens - before.OutputTokens,
		CacheReadTokens: now.CacheReadTokens - before.CacheReadTokens, CacheWriteTokens: now.CacheWriteTokens - before.CacheWriteTokens}
}

// answersJob reports whether a run works on the child's job: it answers the task, a
// completion of the child's own children, or a follow-up (mode "session").
func (s *Session) answersJob(ins []messages.Inbound) bool {
	for _, in := range ins {
		if isTask(in) || in.Subagent != nil || s.isFollowUp(in) {
			return true
		}
	}
	return false
}

// waitsForChildren reports whether a run that went well ended waiting for the child's own
// children: it yielded, or it answered NO_REPLY while they run. The child's job goes on.
func (s *Session) waitsForChildren(msg *turnFinished) bool {
	if msg.err != nil || msg.cancelled || s.subs.stopping {
		return false
	}
	if n := len(msg.msgs); n > 0 {
		if last := msg.msgs[n-1]; last.Role == messages.RoleTool && last.ToolName == subagent.ToolYield && !last.IsError {
			return true
		}
	}
	return agent.IsSilent(msg.reply) && s.activeChildren() > 0
}

// put records the ending in the transaction of the run (after the run's answered inbox
// entries are deleted): the link with its status and its archive schedule, the completion in
// the parent's inbox, and with cleanup "delete" the removal of the child's session (its link
// keeps the answer; a child of mode "session" is removed when it is archived). The stored
// link's follow-up count is the parent's and is kept; follow-ups still in the child's inbox
// keep it running, unless it was stopped: they are dropped with it.
func (e *subagentEnding) put(tx persistence.Tx) error {
	if e == nil {
		return nil
	}
	if err := e.putReplies(tx); err != nil { // subagent_send.go
		return err
	}
	if e.link == nil {
		return nil
	}
	l := *e.link
	cur, ok, err := subagent.Get(tx, l.Child)
	if err != nil {
		return err
	}
	if ok {
		l.FollowUps, l.ArchiveDue = cur.FollowUps, cur.ArchiveDue
	}
	pending, err := subagent.PendingFollowUps(tx, &l)
	if err != nil {
		return err
	}
	e.dropped = 0
	if e.stop {
		for _, seq := range pending {
			if err := tx.DeleteInbox(l.Child, seq); err != nil {
				return err
			}
			e.dropped = max(e.dropped, seq)
		}
		pending = nil
	}
	if len(pending) > 0 { // its next run takes them: it stays running, in its slot
		l.Status, l.Why, l.Ended, l.RunStarted = messages.SubagentRunning, "", time.Time{}, e.now
		err = subagent.Unschedule(tx, &l)
	} else {
		err = subagent.ScheduleArchive(tx, &l)
	}
	if err != nil {
		return err
	}
	if err := subagent.Put(tx, &l); err != nil {
		return err
	}
	run := e.run
	run.FollowUps = l.FollowUps
	e.completion = subagent.Completion(&run, e.answer, len(pending), e.now)
	seq, err := tx.AppendInbox(l.Parent, e.completion)
	if err != nil {
		return err
	}
	e.completion.InboxSeq = seq
	e.stored, e.pending = &l, len(pending)
	if l.Cleanup == "delete" && !l.Persistent() { // a session child's goes when it is archived
		return tx.DeleteSession(l.Child)
	}
	return nil
}

// onSubagentRecorded takes the child's ending as done once its run is durable (hook in
// onTurnRecorded), and lets the Router hand the completion to the parent.
func (s *Session) onSubagentRecorded(ctx actor.Context, e *subagentEnding, err error) {
	if e == nil || err != nil || e.link == nil {
		if e != nil && err == nil {
			for _, r := range e.replies {
				ctx.Send(s.router, &r)
			}
		}
		if self := s.subs.self; self != nil && self.Active() && s.subs.stopping && s.turn == nil {
			s.endNow(ctx, messages.SubagentStopped) // the stop came while a run that waits was being recorded
		}
		return
	}
	for _, r := range e.replies {
		ctx.Send(s.router, &r)
	}
	l := *e.stored
	s.subs.self = &l
	if e.dropped > s.subs.droppedTo { // what the stop dropped from the inbox does not run
		s.subs.droppedTo = e.dropped
		s.queue.waiting = slices.DeleteFunc(s.queue.waiting, s.droppedFollowUp)
	}
	in := e.completion
	ctx.Send(s.router, &subagentEnded{key: s.key, completion: &in, archiveDue: l.ArchiveDue, more: e.pending > 0})
	s.log.Info().Str("session", s.key).Str("parent", l.Parent).Str("status", e.run.Status).Int("pending", e.pending).Msg("sub-agent run finished")
}

// onStopSubagent stops the child's run and, down the tree, its own children's. A child whose
// run was cancelled ends "stopped".
func (s *Session) onStopSubagent(ctx actor.Context) {
	s.stopChildren(ctx)
	s.killProcesses(true) // processes.go
	self := s.subs.self
	if self == nil || !self.Active() || s.subs.stopping {
		return
	}
	s.subs.stopping = true
	if s.turn != nil {
		ctx.Send(s.turn, &cancelTurn{})
		return
	}
	if s.saving { // its run is being recorded: that record ends it (stopping)
		return
	}
	s.endNow(ctx, messages.SubagentStopped) // it waited for its own children
}

// endNow ends a child without a run (stopped while it waited): its link and the completion
// are recorded, and its task and follow-ups, if still waiting, are dropped (the follow-ups by
// put, then onSubagentRecorded).
func (s *Session) endNow(ctx actor.Context, status string) {
	now := s.deps.now()
	l := *s.subs.self
	l.Status, l.Ended, l.Usage = status, now, s.info.Usage
	if l.ArchiveAfter <= 0 {
		l.ArchiveAfter = s.agent.Subagents.withDefaults().ArchiveAfter
	}
	e := &subagentEnding{link: &l, run: l, stop: status == messages.SubagentStopped, now: now}
	var drop []uint64
	for _, in := range s.queue.waiting {
		if isTask(in) && in.InboxSeq != 0 {
			drop = append(drop, in.InboxSeq)
		}
	}
	s.queue.waiting = slices.DeleteFunc(s.queue.waiting, isTask)
	key, self, root := s.key, ctx.Self(), ctx.ActorSystem().Root
	s.writes++
	s.subs.ending = true // no run starts before the end is recorded: a follow-up may be dropped with it
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			for _, seq := range drop {
				if err := tx.DeleteInbox(key, seq); err != nil {
					return err
				}
			}
			return e.put(tx)
		},
		Done: func(err error) { root.Send(self, &childEnded{by: s, ending: e, err: err}) },
	})
}

// childEnded reports that endNow's record is durable (or not).
type childEnded struct {
	by     *Session
	ending *subagentEnding
	err    error
}

func (s *Session) onChildEnded(ctx actor.Context, msg *childEnded) {
	if msg.by != s {
		return
	}
	s.writes--
	s.subs.ending = false
	if msg.err != nil {
		s.subs.stopping = false
		s.log.Error().Err(msg.err).Str("session", s.key).Msg("could not record the sub-agent's end")
		return
	}
	s.onSubagentRecorded(ctx, msg.ending, nil)
	s.maybeStartTurn(ctx)
}

// stopChildren asks every running child to stop and returns how many were asked.
func (s *Session) stopChildren(ctx actor.Context) int {
	n := 0
	for _, l := range s.subs.children {
		if s.childActive(l) {
			ctx.Send(s.router, &stopSubagent{key: l.Child})
			n++
		}
	}
	return n
}

func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
