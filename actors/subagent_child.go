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

type (
	// subagentEnding is a child's finished task run, recorded with the run.
	subagentEnding struct {
		link       *subagent.Link   // nil: the run ends no child's job
		completion messages.Inbound // InboxSeq set by put
		replies    []interReply     // answers to sessions_send callers that wait (subagent_send.go)
	}
	// stopSubagent asks a child to stop its run and its own children's (kill, /stop cascade).
	stopSubagent struct{ key string }
	// subagentEnded tells the Router a child no longer needs its slot; completion, when set,
	// is the durable completion to hand to the parent.
	subagentEnded struct {
		key        string
		completion *messages.Inbound
		archiveDue time.Time // when the child is to be archived (zero: not scheduled)
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
	self := s.subs.self
	return self != nil && self.Persistent() && in.System && in.Source == subagent.FollowUpSource(self.Parent)
}

// followUpStarts makes a child of mode "session" that ended active again when its run takes
// a follow-up (hook in maybeStartTurn): its link is marked running in the store, out of the
// archive schedule, so the run's end records a completion like the first.
func (s *Session) followUpStarts(ctx actor.Context) {
	self := s.subs.self
	if self == nil || self.Active() || !slices.ContainsFunc(s.answering, s.isFollowUp) {
		return
	}
	l := *self
	l.Status, l.Why, l.Ended, l.Archived, l.RunStarted = messages.SubagentRunning, "", time.Time{}, time.Time{}, s.deps.now()
	stored := l
	l.ArchiveDue = time.Time{}
	s.subs.self = &l
	log, key := s.log, s.key
	ctx.Send(s.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			if err := subagent.Unschedule(tx, &stored); err != nil {
				return err
			}
			return subagent.Put(tx, &stored)
		},
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
			return &subagentEnding{replies: replies}
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
	return &subagentEnding{link: &l, completion: subagent.Completion(&run, l.Answer, now), replies: replies}
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

// put records the ending in the transaction of the run: the link with its status and its
// archive schedule, the completion in the parent's inbox, and with cleanup "delete" the
// removal of the child's session (its link keeps the answer; a child of mode "session" is
// removed when it is archived).
func (e *subagentEnding) put(tx persistence.Tx) error {
	if e == nil || e.link == nil {
		return nil
	}
	if err := subagent.ScheduleArchive(tx, e.link); err != nil {
		return err
	}
	if err := subagent.Put(tx, e.link); err != nil {
		return err
	}
	seq, err := tx.AppendInbox(e.link.Parent, e.completion)
	if err != nil {
		return err
	}
	e.completion.InboxSeq = seq
	if e.link.Cleanup == "delete" && !e.link.Persistent() { // a session child's goes when it is archived
		return tx.DeleteSession(e.link.Child)
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
	l := *e.link
	s.subs.self = &l
	in := e.completion
	ctx.Send(s.router, &subagentEnded{key: s.key, completion: &in, archiveDue: l.ArchiveDue})
	s.log.Info().Str("session", s.key).Str("parent", l.Parent).Str("status", l.Status).Msg("sub-agent finished")
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
// are recorded, and its task, if still waiting, is dropped.
func (s *Session) endNow(ctx actor.Context, status string) {
	now := s.deps.now()
	l := *s.subs.self
	l.Status, l.Ended, l.Usage = status, now, s.info.Usage
	if l.ArchiveAfter <= 0 {
		l.ArchiveAfter = s.agent.Subagents.withDefaults().ArchiveAfter
	}
	e := &subagentEnding{link: &l, completion: subagent.Completion(&l, "", now)}
	var drop []uint64
	for _, in := range s.queue.waiting {
		if isTask(in) && in.InboxSeq != 0 {
			drop = append(drop, in.InboxSeq)
		}
	}
	s.queue.waiting = slices.DeleteFunc(s.queue.waiting, isTask)
	key, self, root := s.key, ctx.Self(), ctx.ActorSystem().Root
	s.writes++
	ctx.Send(s.storage, &storeWrite{
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
		if l.Active() {
			ctx.Send(s.router, &stopSubagent{key: l.Child})
			n++
		}
	}
	return n
}

// announceSelf tells the Router, when a child that already ended starts again (a message
// sent to it), that it holds no sub-agent slot.
func (s *Session) announceSelf(ctx actor.Context) {
	if s.subs.self != nil && !s.subs.self.Active() {
		ctx.Send(s.router, &subagentEnded{key: s.key})
	}
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
