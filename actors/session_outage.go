package actors

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/internal/explain"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/providers"
)

// Model outages wait, they do not drop. A run that fails because every model it may use is
// unreachable or overloaded past its retries (providers.ErrUnavailable: the endpoint's
// circuit breaker is open, providers/breaker.go) is not answered with an error: its messages
// go back to the head of the queue and stay in the inbox, and the Session records, in one
// write, that it waits (outageBucket: since when, whether the chat was told), the run's
// entries so far as its started record (the next run resumes from them, turn_started.go),
// and, the first time in this outage, a notice for the chat. Later messages queue behind
// them by the queue mode. The Session then waits for the breakers (Deps.Outages.Wait): when
// a probe answers, the waiting messages run again, in order. A run that ends otherwise
// (answered, or a request error told to the user) ends the wait in the write that records
// it. Past Deps.OutageWait since the outage began, the waiting messages are closed and the
// chat is told, in one write. A restart keeps all of it: the record and the inbox survive.

const (
	outageBucket      = "runs/waiting" // session key → outageRecord
	defaultOutageWait = 60 * time.Minute
	// outageRetryNoBreakers is how often a Session retries when no breakers are wired (tests
	// and embedders that give Deps no Outages).
	outageRetryNoBreakers = 30 * time.Second
)

// outageNotice is what a chat is told when its messages start waiting for the model: why, in
// plain words, and what to do. The operator (terminal, WebChat) sees the server's address; a
// chat on a platform sees only the kind of failure.
func outageNotice(err error, operator bool) string {
	server, doctor := "the model's server", "the operator can run `reef doctor`"
	if operator {
		server, doctor = "", "run `reef doctor`"
	}
	text := "The model is unreachable right now"
	if why := explain.Failure(err, server); why != "" {
		text += ": " + why
	}
	return text + ". I will answer when it is back; if this lasts, " + doctor + "."
}

// outageRecord is a Session's durable wait.
type outageRecord struct {
	Since    time.Time `json:"since"`
	Notified bool      `json:"notified"` // the chat was told (once per outage)
}

// outageWait is a Session waiting for the model.
type outageWait struct {
	since      time.Time
	notified   bool
	back       bool        // a breaker lets calls through again (or reef restarted): the next run may go
	stopWait   func()      // the Deps.Outages registration
	stopGiveUp func() bool // the give-up timer (Deps.Clock)
}

// Session self-messages of an outage.
type (
	outageRecorded struct { // the wait is durable (or failed)
		by  *Session
		out *messages.Outbound
		err error
	}
	outageOver   struct{} // a breaker let calls through again
	outageGiveUp struct{} // Deps.OutageWait passed
	outageClosed struct { // the waiting messages were closed and the chat told (or failed)
		by  *Session
		out *messages.Outbound
		err error
	}
)

func (d *Deps) outageWait() time.Duration {
	if d.OutageWait > 0 {
		return d.OutageWait
	}
	return defaultOutageWait
}

// waitsForModel reports whether a finished run failed on a model outage and must wait.
func (s *Session) waitsForModel(msg *turnFinished) bool {
	return msg.err != nil && !msg.cancelled && errors.Is(msg.err, providers.ErrUnavailable) && len(s.turnUser) > 0 &&
		s.deps.OutageWait >= 0
}

// onOutage puts a run that failed on an outage back in the queue and records the wait.
func (s *Session) onOutage(ctx actor.Context, msg *turnFinished) {
	s.turn, s.tools = nil, nil
	now := s.deps.now()
	if s.wait == nil {
		s.wait = &outageWait{since: now}
		s.log.Warn().Err(msg.err).Str("session", s.key).Msg("model unavailable: the messages wait for it")
	}
	w := s.wait
	w.back = false
	answered := append(append([]messages.Inbound(nil), s.answering...), msg.injected...)
	s.queue.requeueSteered(msg.injected)
	s.queue.waiting = append(answered, s.queue.waiting...)
	s.queue.discard = append(s.turnDrop, s.queue.discard...)
	s.turnDrop = nil
	var resume []messages.ChatMessage
	for _, m := range msg.msgs {
		if m.Role != messages.RoleUser { // the user's messages are in the inbox
			resume = append(resume, m)
		}
	}
	s.resume, s.resumeN = resume, min(len(resume), 1)
	if now.Sub(w.since) >= s.deps.outageWait() {
		s.toConnector(ctx, &messages.TurnEvent{SessionKey: s.key, Kind: messages.TurnFinal})
		s.answering = nil
		s.giveUp(ctx)
		return
	}
	var out *messages.Outbound
	if person, ok := lastPerson(answered); ok && !w.notified {
		out = &messages.Outbound{Channel: person.Channel, Account: person.Account, ChatID: person.ChatID,
			ThreadID: person.ThreadID, ReplyToID: person.MessageID, Text: outageNotice(msg.err, isOperator(person.Channel)), SessionKey: s.key}
	}
	rec, err := json.Marshal(outageRecord{Since: w.since, Notified: w.notified || out != nil})
	if err != nil {
		s.log.Error().Err(err).Msg("outage record")
		return
	}
	started, err := json.Marshal(startedRecord{Entries: resume})
	if err != nil {
		s.log.Error().Err(err).Msg("outage: started record")
		return
	}
	key, self, root := s.key, ctx.Self(), ctx.ActorSystem().Root
	s.saving = true
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if err := deleteStarted(tx, key); err != nil {
				return err
			}
			if len(resume) > 0 {
				if err := tx.Put(startedBucket, startedKey(key, 0), started); err != nil {
					return err
				}
			}
			if err := tx.Put(outageBucket, key, rec); err != nil {
				return err
			}
			if out == nil {
				return nil
			}
			seq, err := tx.AppendOutbox(key, *out)
			out.OutboxSeq = seq
			return err
		},
		Done: func(err error) { root.Send(self, &outageRecorded{by: s, out: out, err: err}) },
	})
}

// lastPerson returns the newest message a person sent (the chat to tell), if any.
func lastPerson(ins []messages.Inbound) (messages.Inbound, bool) {
	for i := len(ins) - 1; i >= 0; i-- {
		if !ins[i].System && ins[i].Channel != "" {
			return ins[i], true
		}
	}
	return messages.Inbound{}, false
}

// onOutageRecorded tells the chat (the first time) and waits for the model.
func (s *Session) onOutageRecorded(ctx actor.Context, msg *outageRecorded) {
	if msg.by != s {
		return
	}
	s.saving = false
	if s.wait != nil { // registered before the chat is told: a recovery after the notice finds it
		s.awaitModel(ctx)
	}
	if msg.err != nil {
		s.log.Error().Err(msg.err).Str("session", s.key).Msg("could not record the wait for the model; the messages stay in the inbox")
	} else if msg.out != nil && s.wait != nil {
		s.wait.notified = true
		s.toConnector(ctx, msg.out)
	}
	s.toConnector(ctx, &messages.TurnEvent{SessionKey: s.key, Kind: messages.TurnFinal})
	s.answering = nil
	s.runDeferred(ctx)
	s.maybeStartTurn(ctx)
}

// awaitModel registers the wait with the breakers, and the give-up timer once.
func (s *Session) awaitModel(ctx actor.Context) {
	w := s.wait
	self, root := ctx.Self(), ctx.ActorSystem().Root
	if w.stopWait != nil {
		w.stopWait()
	}
	over := func() { root.Send(self, &outageOver{}) }
	if s.deps.Outages != nil {
		w.stopWait = s.deps.Outages.Wait(s.key, s.queue.len(), over)
	} else {
		stop := s.deps.clock().AfterFunc(outageRetryNoBreakers, over)
		w.stopWait = func() { stop() }
	}
	if w.stopGiveUp == nil {
		d := w.since.Add(s.deps.outageWait()).Sub(s.deps.now())
		w.stopGiveUp = s.deps.clock().AfterFunc(max(d, 0), func() { root.Send(self, &outageGiveUp{}) })
	}
}

// holdForModel reports whether the queued messages wait for the model; a new message
// updates the count the breakers show.
func (s *Session) holdForModel(ctx actor.Context) bool {
	w := s.wait
	if w == nil || w.back {
		return false
	}
	if w.stopWait != nil && s.deps.Outages != nil {
		s.awaitModel(ctx)
	}
	return true
}

func (s *Session) onOutageOver(ctx actor.Context, _ *outageOver) {
	if s.wait == nil {
		return
	}
	s.wait.stopWait, s.wait.back = nil, true
	s.maybeStartTurn(ctx)
}

func (s *Session) onOutageGiveUp(ctx actor.Context, _ *outageGiveUp) {
	if s.wait == nil {
		return
	}
	s.wait.stopGiveUp = nil
	if s.turn != nil || s.saving {
		return // the run going now decides: answered, or past the bound in onOutage
	}
	s.giveUp(ctx)
}

// giveUp closes every waiting message — their inbox entries, the wait and the run's started
// records — and tells the chat, in one write.
func (s *Session) giveUp(ctx actor.Context) {
	w := s.wait
	s.stopWaiting()
	waiting := append(s.queue.steering, s.queue.waiting...)
	s.queue.steering, s.queue.waiting = nil, nil
	seqs := s.queue.takeDiscarded()
	for _, in := range waiting {
		if in.InboxSeq != 0 {
			seqs = append(seqs, in.InboxSeq)
		}
	}
	var outbox []*messages.Outbound
	if person, ok := lastPerson(waiting); ok {
		outbox = append(outbox, &messages.Outbound{Channel: person.Channel, Account: person.Account, ChatID: person.ChatID,
			ThreadID: person.ThreadID, SessionKey: s.key, Failed: true, Text: fmt.Sprintf(
				"The model has been unreachable since %s, so I gave up: %d message(s) you sent were not answered. Please send them again later.",
				w.since.In(s.agent.location()).Format("15:04 MST"), len(waiting))})
	}
	s.log.Warn().Str("session", s.key).Int("messages", len(waiting)).Time("since", w.since).Msg("model unavailable too long: gave up")
	key, info, attempts := s.key, s.info, s.attempts
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s.resume, s.resumeN = nil, 0
	s.saving = true
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if err := deleteStarted(tx, key); err != nil {
				return err
			}
			if err := tx.Delete(outageBucket, key); err != nil {
				return err
			}
			return settle(tx, key, seqs, outbox, info, attempts)
		},
		Done: func(err error) { root.Send(self, &outageClosed{by: s, out: firstOr(outbox), err: err}) },
	})
}

func firstOr(outs []*messages.Outbound) *messages.Outbound {
	if len(outs) == 0 {
		return nil
	}
	return outs[0]
}

func (s *Session) onOutageClosed(ctx actor.Context, msg *outageClosed) {
	if msg.by != s {
		return
	}
	s.saving = false
	if msg.err != nil { // nobody was told: a restart runs them again
		s.log.Error().Err(msg.err).Str("session", s.key).Msg("could not close the messages that waited for the model")
	} else if msg.out != nil {
		s.toConnector(ctx, msg.out)
	}
	s.runDeferred(ctx)
	s.maybeStartTurn(ctx)
}

// endWait ends the wait when a run ended other than on an outage; it reports whether the
// write recording the run must delete the wait's record.
func (s *Session) endWait() bool {
	if s.wait == nil {
		return false
	}
	s.stopWaiting()
	return true
}

// stopWaiting forgets the wait and stops its registration and timer.
func (s *Session) stopWaiting() {
	w := s.wait
	if w == nil {
		return
	}
	if w.stopWait != nil {
		w.stopWait()
	}
	if w.stopGiveUp != nil {
		w.stopGiveUp()
	}
	s.wait = nil
}

// loadWait reads the session's wait for the model, if a restart interrupted one: the
// messages in the inbox run again at once (the breakers start closed), and the chat is not
// told again.
func loadWait(r persistence.Reader, key string) (*outageWait, error) {
	v, ok, err := r.Get(outageBucket, key)
	if err != nil || !ok {
		return nil, err
	}
	var rec outageRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("outage record: %w", err)
	}
	return &outageWait{since: rec.Since, notified: rec.Notified, back: true}, nil
}

// resumeWait starts the give-up timer of a wait loaded from the store, or drops the record
// when no message is left to wait.
func (s *Session) resumeWait(ctx actor.Context) {
	if s.wait == nil {
		return
	}
	if len(s.queue.waiting) == 0 {
		s.dropWait(ctx)
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	d := s.wait.since.Add(s.deps.outageWait()).Sub(s.deps.now())
	s.wait.stopGiveUp = s.deps.clock().AfterFunc(max(d, 0), func() { root.Send(self, &outageGiveUp{}) })
}

// dropWait ends a wait that has no message left (/stop, /new dropped them): its record goes,
// and so do the entries of the run that failed on the outage, which no run resumes now.
func (s *Session) dropWait(ctx actor.Context) {
	s.stopWaiting()
	s.resume, s.resumeN = nil, 0
	key, log := s.key, s.log
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if err := deleteStarted(tx, key); err != nil {
				return err
			}
			return tx.Delete(outageBucket, key)
		},
		Done: func(err error) {
			if err != nil {
				log.Error().Err(err).Str("session", key).Msg("could not delete the wait for the model")
			}
		},
	})
}

// outageLine is the /status line of a wait for the model ("" when there is none).
func (s *Session) outageLine(now time.Time) string {
	if s.wait == nil {
		return ""
	}
	line := fmt.Sprintf("Model: UNREACHABLE since %s; %d message(s) waiting", roughDuration(now.Sub(s.wait.since))+" ago", s.queue.len())
	for _, o := range s.deps.Outages.Outages() {
		line += fmt.Sprintf("; %s", o.Provider)
		if !o.NextProbe.IsZero() {
			line += fmt.Sprintf(" next probe in %s", roughDuration(max(o.NextProbe.Sub(now), 0)))
		} else {
			line += " answering again"
		}
	}
	give := s.wait.since.Add(s.deps.outageWait())
	return line + fmt.Sprintf("; gives up in %s (llm.outageWaitMinutes)", roughDuration(max(give.Sub(now), 0)))
}

// WaitingForModel is a session whose messages wait for the model (reef status).
type WaitingForModel struct {
	SessionKey string    `json:"sessionKey"`
	Since      time.Time `json:"since"`
	Messages   int       `json:"messages"`
}

// ListWaitingForModel reads the sessions waiting for the model, with their inbox sizes.
func ListWaitingForModel(r persistence.Reader) ([]WaitingForModel, error) {
	var out []WaitingForModel
	err := r.Scan(outageBucket, "", func(k string, v []byte) error {
		var rec outageRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("outage record %s: %w", k, err)
		}
		out = append(out, WaitingForModel{SessionKey: k, Since: rec.Since})
		return nil
	})
	for i := range out {
		if err != nil {
			break
		}
		var in []persistence.InboxItem
		in, err = r.Inbox(out[i].SessionKey)
		out[i].Messages = len(in)
	}
	return out, err
}

// WaitsForModel reports whether the session's messages wait for the model (reef chat does not
// hold the terminal for them).
func WaitsForModel(r persistence.Reader, key string) (bool, error) {
	_, ok, err := r.Get(outageBucket, key)
	return ok, err
}
