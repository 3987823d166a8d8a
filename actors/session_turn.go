package actors

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/internal/explain"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/usage"
)

// onTurnFinished records a finished run in one transaction — the user messages, every entry
// the run produced, the removal of the answered inbox entries, the reply's outbox row and
// the session info — and sends nothing until that transaction is durable.
func (s *Session) onTurnFinished(ctx actor.Context, msg *turnFinished) error {
	if msg.seq != s.turnSeq || s.turn == nil {
		return nil
	}
	if msg.user != nil { // with their files saved and described (turn_media.go)
		s.turnUser = msg.user
	}
	if s.waitsForModel(msg) { // the messages wait for the model (session_outage.go)
		s.onOutage(ctx, msg)
		return nil
	}
	s.turn = nil
	s.saving = true
	s.tools = nil
	s.answering = append(s.answering, msg.injected...)
	s.queue.requeueSteered(msg.injected)
	interrupted := s.queue.interrupted && msg.cancelled
	s.queue.interrupted = false
	entries := append(append([]messages.ChatMessage(nil), s.turnUser...), msg.msgs...)
	now := s.deps.now()
	info := s.info
	if info.Created.IsZero() {
		info.Created = now
	}
	info.Updated = now
	if s.ownerAnswered() { // the owner's session: cron and heartbeats run here as the owner's (timer_event.go)
		info.OwnerSeen = now
	}
	if len(s.turnUser) > 0 { // not a /compact, which only compacts
		info.Turns++
	}
	info.Usage = info.Usage.Add(msg.usage)
	s.chargeBudget(&info, msg.usage, now)
	s.chargeSubagents(&info, now)
	ending := s.subagentEnd(msg, info, now) // a child's task run: its completion goes with it (subagent_child.go)

	var outbox []*messages.Outbound
	last := s.answering[len(s.answering)-1]
	text := s.deps.redactor().apply(replyText(msg, isOperator(last.Channel)))
	if last.Source == "heartbeat" && isHeartbeatOK(text) {
		text = "" // nothing needs the user's attention
	}
	if interrupted || len(s.deferred) > 0 || s.repeatsToolMessage(text) {
		text = "" // stopped for a newer message or a /new: that one gets the answer
	}
	if last.Channel != "" {
		outbox = s.replies(last, msg, text)
		for _, out := range outbox {
			out.MaxChunks = s.agent.Limits.withDefaults().MaxReplyChunks
		}
	}
	inboxSeqs := append(s.turnDrop, s.queue.takeDiscarded()...) // with messages /stop or the queue cap dropped
	s.turnDrop = nil
	for _, in := range s.answering {
		if in.InboxSeq != 0 {
			inboxSeqs = append(inboxSeqs, in.InboxSeq)
		}
	}
	key, self, root := s.key, ctx.Self(), ctx.ActorSystem().Root
	snap := s.snapshotFor(msg) // the run's compaction, stored in the same transaction
	var failed string
	if msg.err != nil && !msg.cancelled {
		failed = s.deps.redactor().apply(msg.err.Error())
	}
	var seqs []uint64
	attempts := s.attempts                      // never changed after the Session loaded it
	ran := len(s.turnUser) > 0                  // a run, not a /compact: its started records go (turn_started.go)
	waited := ran && s.endWait()                // it waited for the model: the wait is over (session_outage.go)
	ledger, spent := s.usageKey(now), msg.usage // the token ledger's row (session_usage.go)
	write := &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			var err error
			if seqs, err = tx.AppendMessages(key, entries...); err != nil {
				return err
			}
			if err := snap.put(tx, key, seqs); err != nil {
				return err
			}
			if ran {
				if err := deleteStarted(tx, key); err != nil {
					return err
				}
			}
			if waited {
				if err := tx.Delete(outageBucket, key); err != nil {
					return err
				}
			}
			if err := settle(tx, key, inboxSeqs, outbox, info, attempts); err != nil {
				return err
			}
			if err := ending.put(tx); err != nil {
				return err
			}
			if err := usage.Add(tx, ledger, spent); err != nil {
				return err
			}
			if sessionkey.IsStateless(key) { // it lived for this run: nothing of it stays
				return tx.DeleteSession(key)
			}
			return nil
		},
		Done: func(err error) {
			root.Send(self, &turnRecorded{by: s, outbox: outbox, err: err, seqs: seqs, snap: snap, failed: failed, ending: ending,
				usage: msg.usage, calls: msg.clientCalls})
		},
	}
	// kept until it commits: written again if closing the run fails too (session_record.go)
	s.record = &runRecord{write: write, key: key, inboxSeqs: inboxSeqs, ran: ran, waited: waited, attempts: attempts}
	ctx.Send(s.storage, write)
	s.info = info
	s.turnUser = entries // kept until recorded, then appended to history
	s.reportHeartbeat(ctx, msg)
	if msg.err != nil && !msg.cancelled {
		s.log.Warn().Err(msg.err).Str("session", s.key).Msg("run failed")
	}
	return nil
}

// onTurnRecorded sends the recorded reply, then starts the next run if messages are queued.
func (s *Session) onTurnRecorded(ctx actor.Context, msg *turnRecorded) {
	if msg.by != s { // written by the instance before a restart: this one reloaded the result
		return
	}
	if msg.err != nil { // closed instead, or written again later (session_record.go)
		s.recordFailed(ctx, msg)
		return
	}
	s.saving, s.record = false, nil
	entries := s.turnUser
	s.turnUser = nil
	s.appendHistory(entries, msg.seqs, msg.snap)
	s.onSubagentRecorded(ctx, msg.ending, nil)
	for _, out := range msg.outbox {
		s.toConnector(ctx, out)
	}
	failed := msg.failed
	s.toConnector(ctx, &messages.TurnEvent{SessionKey: s.key, Kind: messages.TurnFinal, IsError: failed != "", Text: failed,
		Usage: msg.usage, ClientCalls: msg.calls})
	s.answering = nil
	s.runDeferred(ctx)
	s.maybeStartTurn(ctx)
}

// onOutboundSent notes that a Connector is done with one of the session's replies; a
// respawned Session would send a reply still in the outbox again, so an idle Session waits
// for these before it may be passivated.
func (s *Session) onOutboundSent(ctx actor.Context, msg *messages.OutboundSent) {
	delete(s.unsent, msg.OutboxSeq)
	if len(s.unsent) == 0 {
		s.unsent = nil
		s.maybeStartTurn(ctx) // reports idle when nothing else is going on
	}
}

// replies are the outbox rows of a finished run for the chat of last: the reply, opened by
// the model's visible reasoning when the session shows it (/reasoning on). One message keeps
// them in order on platforms where the reply replaces the run's draft.
func (s *Session) replies(last messages.Inbound, msg *turnFinished, text string) []*messages.Outbound {
	r := agent.ParseReply(msg.reply)
	files, notes := s.replyMedia(r, msg)
	text = strings.TrimSpace(text + notes)
	if text == "" && len(files) == 0 {
		return nil
	}
	if s.info.ShowReasoning {
		var reasoning []string
		for _, m := range msg.msgs {
			if r := strings.TrimSpace(m.Reasoning); r != "" && m.Role == messages.RoleAssistant {
				reasoning = append(reasoning, r)
			}
		}
		if len(reasoning) > 0 {
			r := s.deps.redactor().apply(strings.Join(reasoning, "\n\n"))
			text = "Reasoning:\n" + capRunes(r, maxShownReasoning) + "\n\n---\n\n" + text
		}
	}
	return []*messages.Outbound{{Channel: last.Channel, Account: last.Account, ChatID: last.ChatID,
		ThreadID: last.ThreadID, ReplyToID: s.replyTarget(last, r), Quote: r.ReplyToCurrent || r.ReplyTo != "",
		Text: text, Media: files, SessionKey: s.key,
		Failed: msg.err != nil && !msg.cancelled}}
}

// maxReplyFiles caps the files one reply sends.
const maxReplyFiles = 10

// replyMedia turns the reply's MEDIA: lines into files to send with it, confined to the
// agent's workspace (internal/media.Outbound); a reference that is refused becomes a note in
// the text. A failed, cancelled or silent run sends none.
func (s *Session) replyMedia(r agent.Reply, msg *turnFinished) ([]messages.Media, string) {
	if len(r.Media) == 0 || msg.err != nil || msg.cancelled || r.Silent {
		return nil, ""
	}
	var files []messages.Media
	var notes strings.Builder
	for i, ref := range r.Media {
		if i >= maxReplyFiles {
			fmt.Fprintf(&notes, "\n(%d more files not sent: at most %d per reply)", len(r.Media)-i, maxReplyFiles)
			break
		}
		m, err := media.Outbound(s.agent.Workspace, ref)
		if err == nil {
			err = s.confineMedia(m)
		}
		if err != nil {
			fmt.Fprintf(&notes, "\n(%s not sent: %v)", ref, err)
			continue
		}
		files = append(files, m)
	}
	return files, notes.String()
}

// maxShownReasoning caps the reasoning shown with /reasoning on, in runes.
const maxShownReasoning = 3500

// capRunes caps text at n runes.
func capRunes(text string, n int) string {
	if r := []rune(text); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return text
}

// onTurnTerminated notes that the running Turn stopped. Terminated overtakes the user
// messages the Turn sent before stopping, so the verdict waits behind them as turnLost.
func (s *Session) onTurnTerminated(ctx actor.Context, msg *actor.Terminated) {
	if s.turn != nil && msg.Who.Id == s.turn.Id {
		ctx.Send(ctx.Self(), &turnLost{seq: s.turnSeq})
	}
}

// onTurnLost handles a Turn that stopped without reporting (it panicked): the run is
// recorded as failed, the user is told, and the session goes on.
func (s *Session) onTurnLost(ctx actor.Context, msg *turnLost) error {
	if s.turn == nil || msg.seq != s.turnSeq {
		return nil
	}
	return s.onTurnFinished(ctx, &turnFinished{seq: s.turnSeq, err: errors.New("the run crashed")})
}

// HeartbeatOK is the reply that tells reef a heartbeat found nothing to report.
const HeartbeatOK = "HEARTBEAT_OK"

// isHeartbeatOK reports whether a heartbeat's reply is only the all-clear: the token alone or
// with at most 300 other characters.
func isHeartbeatOK(text string) bool {
	return strings.Contains(text, HeartbeatOK) && len(strings.TrimSpace(text))-len(HeartbeatOK) <= 300
}

// replyText is what the user is sent for a finished run: the answer without its directives
// (agent.ParseReply), unless it is the silent token, or a short explanation when the run
// failed.
func replyText(msg *turnFinished, operator bool) string {
	r := agent.ParseReply(msg.reply)
	switch {
	case msg.cancelled:
		return "Stopped."
	case msg.err != nil:
		if r.Silent {
			r.Text = ""
		}
		return failureText(msg.err, operator) + partial(r.Text)
	case r.Silent:
		return ""
	}
	return r.Text
}

func partial(reply string) string {
	if reply == "" {
		return ""
	}
	return "\n\n" + reply
}

// isOperator reports whether the person on channel is the operator: the terminal, or WebChat
// (whoever holds the gateway token). They are shown server addresses and told to run `reef
// doctor` themselves.
func isOperator(channel string) bool { return channel == "terminal" || channel == "webchat" }

// failureText turns a run's error into one friendly line; the detail stays in the log.
// operator is true when the user is the operator (the terminal): they are told to run
// `reef doctor` themselves.
func failureText(err error, operator bool) string {
	doctor := "the operator should run `reef doctor`"
	if operator {
		doctor = "run `reef doctor`"
	}
	switch {
	case errors.Is(err, providers.ErrRateLimited), errors.Is(err, providers.ErrOverloaded):
		return "The model is busy right now (rate limited or overloaded). Please try again in a minute."
	case errors.Is(err, providers.ErrAuth):
		if operator {
			return "The model provider rejected reef's API key. Fix it in the configuration (run `reef doctor`)."
		}
		return "The model provider rejected reef's API key. The operator needs to fix it (run `reef doctor`)."
	case errors.Is(err, providers.ErrModelNotFound):
		return modelNotFoundText(err, operator)
	case errors.Is(err, providers.ErrContextOverflow):
		return "This conversation no longer fits in the model's context window. Send /new to start fresh."
	case errors.Is(err, providers.ErrResponseTooLarge):
		return "The model's answer grew too large (text and tool arguments past reef's bound), so I stopped reading it. Try asking for a smaller step."
	case errors.Is(err, providers.ErrIdleTimeout), errors.Is(err, providers.ErrStreamCut), errors.Is(err, providers.ErrServer):
		return "I lost the connection to the model. Please try again."
	case isNetError(err):
		server := "the model's server"
		if operator {
			server = ""
		}
		why := ""
		if w := explain.Failure(err, server); w != "" {
			why = " (" + w + ")"
		}
		return "I could not reach the model's server" + why + ". Please try again; if it keeps failing, " + doctor + "."
	case errors.Is(err, errTurnTimeout):
		return "This took too long, so I stopped. Try asking for a smaller step."
	case errors.Is(err, errStreamTimeout):
		return "The model's answer took too long, so I stopped it. Try asking for a shorter answer."
	case errors.Is(err, errToolLimit):
		return fmt.Sprintf("I stopped: %v.", err)
	}
	return "Sorry, something went wrong while answering. Please try again."
}

// modelNotFoundText says which model the provider does not offer, what it offers, and how
// to switch: /model, or (for the operator) the configuration.
func modelNotFoundText(err error, operator bool) string {
	var nf *providers.ModelNotFoundError
	if !errors.As(err, &nf) {
		return "The model was not found at the provider. Switch with /model <provider/name>."
	}
	text := fmt.Sprintf("The model %s/%s was not found: %s does not offer it.", nf.Provider, nf.Model, nf.Provider)
	if n := len(nf.Offered); n > 0 {
		shown := nf.Offered[:min(n, 12)]
		text += fmt.Sprintf(" It offers: %s", strings.Join(shown, ", "))
		if n > len(shown) {
			text += fmt.Sprintf(" and %d more", n-len(shown))
		}
		text += "."
	}
	text += fmt.Sprintf(" Switch with /model %s/<name>", nf.Provider)
	if operator {
		text += ", or set the model in the configuration (the agent's `model` in reef.yaml, or REEF_MODEL) and check it with `reef doctor`"
	}
	return text + "."
}

// isNetError reports whether err is a failure to reach a server (refused, reset, DNS, timeout).
func isNetError(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr)
}

// reportHeartbeat tells the Timer when a run shows whether the agent's provider accepts the
// key: the Timer pauses an agent's heartbeats while the provider rejects it (401/403) and
// resumes them after the next run that reached the model.
func (s *Session) reportHeartbeat(ctx actor.Context, msg *turnFinished) {
	if s.deps.timer == nil {
		return
	}
	out := &beatOutcome{agentID: s.agent.ID, reached: msg.err == nil}
	if errors.Is(msg.err, providers.ErrAuth) {
		out.authErr = msg.err
	}
	if isDirectKey(s.agent.ID, s.key) && s.ownerAnswered() {
		out.direct = s.key
	}
	if out.reached || out.authErr != nil || out.direct != "" {
		ctx.Send(s.deps.timer, out)
	}
}

// settle is the end of every transaction that answers messages: it removes their inbox
// entries (and the crash counts of those that have one), stores the replies in the outbox (setting their OutboxSeq) and the session info.
func settle(tx persistence.Tx, key string, inboxSeqs []uint64, outbox []*messages.Outbound, info persistence.SessionInfo,
	attempts map[uint64]int) error {
	if err := clearAttempts(tx, key, attempts, inboxSeqs); err != nil {
		return err
	}
	for _, seq := range inboxSeqs {
		if err := tx.DeleteInbox(key, seq); err != nil {
			return err
		}
	}
	for _, out := range outbox {
		seq, err := tx.AppendOutbox(key, *out)
		if err != nil {
			return err
		}
		out.OutboxSeq = seq
	}
	return tx.PutSession(info)
}
