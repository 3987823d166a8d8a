package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/sessionkey"
)

// A run whose result cannot be stored (a full disk, a write error) is either answered, once
// the write succeeds, or reported failed — never both. When the write recording the run
// fails, the Session at once tries a smaller one that closes the run instead: the run's inbox
// entries removed and the notice "send it again" stored in the outbox, in one transaction,
// so the notice is sent only when the messages are closed and a restart cannot answer them
// as well. When that write fails too, nobody is told anything: the messages stay in the
// inbox (a restart answers them, once), and the Session tries again after a backoff — the
// run's record first, then the closing — holding later messages in its queue meanwhile.

const (
	recordRetryFirst = time.Second
	recordRetryMax   = time.Minute

	unsavedNotice = "Sorry, I could not save my answer (storage error), so it was not sent. Please send your message again."
)

// runRecord is a finished run whose record is being written.
type runRecord struct {
	write     *storeWrite // the run's record; sent again until it commits or the run is closed
	key       string
	inboxSeqs []uint64 // the inbox entries the run answers (and drops)
	ran       bool     // a run, not a /compact: its started records go
	waited    bool     // it waited for the model: the wait's record goes
	attempts  map[uint64]int
	delay     time.Duration
	stopRetry func() bool
}

type (
	// runClosed reports the write that closes a run whose record failed.
	runClosed struct {
		by     *Session
		out    *messages.Outbound
		ending *subagentEnding // a sub-agent's run: its "failed" completion, written with the closing
		err    error
	}
	// recordRetryDue: time to try the failed record again.
	recordRetryDue struct{ rec *runRecord }
)

// recordFailed handles a run whose record failed: close it and tell the chat, in one write.
func (s *Session) recordFailed(ctx actor.Context, msg *turnRecorded) {
	rec := s.record
	s.log.Error().Err(msg.err).Str("session", s.key).Msg("could not record the run; closing its messages instead")
	var out *messages.Outbound
	if person, ok := lastPerson(s.answering); ok {
		out = &messages.Outbound{Channel: person.Channel, Account: person.Account, ChatID: person.ChatID,
			ThreadID: person.ThreadID, ReplyToID: person.MessageID, SessionKey: s.key, Failed: true, Text: unsavedNotice}
	}
	ending := unsavedEnding(msg.ending, s.deps.clock().Now())
	self, root := ctx.Self(), ctx.ActorSystem().Root
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if rec.ran {
				if err := deleteStarted(tx, rec.key); err != nil {
					return err
				}
			}
			if rec.waited {
				if err := tx.Delete(outageBucket, rec.key); err != nil {
					return err
				}
			}
			if err := clearAttempts(tx, rec.key, rec.attempts, rec.inboxSeqs); err != nil {
				return err
			}
			for _, seq := range rec.inboxSeqs {
				if err := tx.DeleteInbox(rec.key, seq); err != nil {
					return err
				}
			}
			if err := ending.put(tx); err != nil { // after the run's inbox entries: it reads what is left
				return err
			}
			if sessionkey.IsStateless(rec.key) { // it lived for this run (session_turn.go)
				return tx.DeleteSession(rec.key)
			}
			if out == nil {
				return nil
			}
			seq, err := tx.AppendOutbox(rec.key, *out)
			out.OutboxSeq = seq
			return err
		},
		Done: func(err error) { root.Send(self, &runClosed{by: s, out: out, ending: ending, err: err}) },
	})
}

// onRunClosed tells the chat once the run is closed; if even that could not be written, it
// tries the run's record again after a backoff.
func (s *Session) onRunClosed(ctx actor.Context, msg *runClosed) {
	if msg.by != s || s.record == nil {
		return
	}
	if msg.err != nil {
		rec := s.record
		rec.delay = min(max(2*rec.delay, recordRetryFirst), recordRetryMax)
		s.log.Error().Err(msg.err).Str("session", s.key).Str("retry", rec.delay.Round(time.Millisecond).String()).
			Msg("could not close the run either; its messages stay in the inbox, trying again")
		self, root := ctx.Self(), ctx.ActorSystem().Root
		rec.stopRetry = s.deps.clock().AfterFunc(rec.delay, func() { root.Send(self, &recordRetryDue{rec: rec}) })
		return
	}
	s.record, s.saving, s.turnUser = nil, false, nil
	if msg.out != nil {
		s.toConnector(ctx, msg.out)
	}
	s.onSubagentRecorded(ctx, msg.ending, nil)
	s.toConnector(ctx, &messages.TurnEvent{SessionKey: s.key, Kind: messages.TurnFinal, IsError: true,
		Text: "could not save the conversation"})
	s.answering = nil
	s.runDeferred(ctx)
	s.maybeStartTurn(ctx)
}

// onRecordRetryDue writes the run's record again.
func (s *Session) onRecordRetryDue(ctx actor.Context, msg *recordRetryDue) {
	if s.record != msg.rec {
		return
	}
	s.record.stopRetry = nil
	ctx.Send(s.storage, s.record.write)
}

// stopRecordRetry stops a pending retry (the Session stops).
func (s *Session) stopRecordRetry() {
	if s.record != nil && s.record.stopRetry != nil {
		s.record.stopRetry()
		s.record.stopRetry = nil
	}
}

// commandFailed handles a command whose answer could not be stored: like a run, it is closed
// (its inbox entry removed) with a notice to try again in one write; when that fails too,
// nobody is told, and a restart answers the command.
func (s *Session) commandFailed(ctx actor.Context, msg *commandRecorded) {
	if msg.closing {
		s.log.Error().Err(msg.err).Str("session", s.key).Msg("could not close a command either; it stays in the inbox for the next start")
		s.maybeStartTurn(ctx)
		return
	}
	s.log.Error().Err(msg.err).Str("session", s.key).Msg("could not record a command; closing it instead")
	out := *msg.out
	out.Text, out.OutboxSeq = "Sorry, I could not save that (storage error). Please try again later.", 0
	key, seqs, attempts := s.key, msg.seqs, s.attempts
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s.writes++
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if err := clearAttempts(tx, key, attempts, seqs); err != nil {
				return err
			}
			for _, seq := range seqs {
				if err := tx.DeleteInbox(key, seq); err != nil {
					return err
				}
			}
			if out.Channel == "" {
				return nil
			}
			seq, err := tx.AppendOutbox(key, out)
			out.OutboxSeq = seq
			return err
		},
		Done: func(err error) {
			root.Send(self, &commandRecorded{by: s, out: &out, err: err, seqs: seqs, closing: true})
		},
	})
}

// unsavedEnding turns the ending of a sub-agent's run whose record could not be stored into a
// "failed" one, so its parent still hears of it (nil when the run ended no sub-agent's job).
func unsavedEnding(e *subagentEnding, now time.Time) *subagentEnding {
	if e == nil || e.link == nil {
		return nil
	}
	l := *e.link
	l.Status, l.Why, l.Answer, l.Ended = messages.SubagentFailed, "could not save its run (storage error)", "", now
	run := e.run
	run.Status, run.Why, run.Answer, run.Ended = l.Status, l.Why, "", now
	return &subagentEnding{link: &l, run: run, stop: e.stop, now: now}
}
