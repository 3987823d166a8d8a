package actors

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools"
)

// Session owns one conversation: its transcript, the queue of accepted messages, and at most
// one running Turn. Storage holds the truth; a restarted or respawned Session reloads it and
// runs whatever its inbox still holds. Commands (/stop, /new, ...) from the people allowed
// to give them are handled here without a model call; other messages start a run, or wait
// by the session's queue mode while one is active (session_queue.go).
type Session struct {
	key     string
	deps    *Deps
	agent   *Agent
	storage *actor.PID
	router  *actor.PID
	log     zerolog.Logger

	info     persistence.SessionInfo
	history  []messages.ChatMessage // what the model sees: latest summary + entries after it
	queue    sessionQueue           // messages waiting for a run or steered into it (session_queue.go)
	maxInbox uint64                 // highest inbox seq queued, to ignore re-deliveries
	// loadedInbox is the highest inbox seq loaded at start. Events reef raises (completions,
	// cron) come from several actors and may arrive out of seq order; one above it is new.
	loadedInbox uint64
	// epoch is the lease epoch of the session's partition when it started (cluster mode,
	// Deps.Cluster): its writes are fenced by it (storeWrite.Epoch); -1: not this node's.
	epoch int64
	// took holds the inbox seqs above loadedInbox taken in cluster mode, where a message
	// may come both routed and from a re-read of the inbox (onInboxChanged).
	took map[uint64]bool

	collect  func() bool          // stops the pending collect wake-up
	deferred []deferredCommand    // commands waiting for the running Turn to end (/new, /reset)
	writes   int                  // command answers being recorded
	tools    map[string]string    // running tool calls of the current run: step id → label
	toolSent []string             // what the message tool sent during the current run (normalized)
	unsent   map[uint64]time.Time // outbox seqs handed to a Connector and not yet confirmed: when
	handling []uint64             // inbox seqs this Receive handles (charged if it panics)
	attempts map[uint64]int       // inbox seq → times it crashed this session (session_poison.go)

	turn      *actor.PID
	turnSeq   uint64
	answering []messages.Inbound // what the running turn answers
	answered  []messages.Inbound // the latest messages answered, for [[reply_to:<id>]] (session_reply.go)
	turnUser  []messages.ChatMessage
	turnTools tools.Policy           // what the running Turn may use: a message may steer it only with these rights
	turnReach tools.Reach            // what of the workspace it may name (session_access.go)
	turnDrop  []uint64               // inbox seqs the running turn deletes without answering
	saving    bool                   // a finished turn is being committed
	resume    []messages.ChatMessage // entries of a run a crash interrupted, for the next run (turn_started.go)
	resumeN   int                    // how many started records hold them
	awaiting  map[string]bool        // calls of that run waiting for approval (session_approval.go)
	respawns  map[string]bool        // its sessions_spawn calls without a result, for the run that resumes it (subagent.go)
	approvals map[string]string      // the running Turn's calls waiting for approval: request id → command

	cmp    sessionCompact // history seqs, summary flag, waiting /compact commands (session_compact.go)
	wait   *outageWait    // the queued messages wait for the model to come back (session_outage.go)
	record *runRecord     // the finished run being recorded (session_record.go)
	subs   subagentState  // its own link when it is a sub-agent, its children (subagent.go)
}

// Session self-messages.
type (
	turnRecorded struct {
		by     *Session // the instance that sent the write; a restarted Session ignores its predecessor's
		outbox []*messages.Outbound
		err    error
		seqs   []uint64        // the seqs the run's entries were stored under
		snap   *snapshotWrite  // the run's compaction, stored with them (session_compact.go)
		failed string          // why the run failed (redacted); "" when it did not
		ending *subagentEnding // a sub-agent's task run: its completion, recorded with it
		usage  messages.Usage  // the run's tokens, told to the Connector with the run's end

		calls []messages.ToolCall // client calls the run parked with, told with the run's end (turn_client.go)
	}
	turnLost struct{ seq uint64 }
)

// turnSeqs numbers Turns across every Session incarnation: a Session restarted after a panic
// must not take its predecessor's late turnFinished or turnLost for its own run's.
var turnSeqs atomic.Uint64

// SessionProps is the recipe for every Session. One Props serves all of them, so an idle
// Session costs only its own state: a Session learns its key from its actor name, which the
// Router sets with sessionName.
func SessionProps(deps *Deps, storage, router *actor.PID) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &Session{deps: deps, storage: storage, router: router, log: deps.Log}
	},
		actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(deps.Log)),
		actor.WithSupervisor(actor.NewOneForOneStrategy(0, 0, stopDecider)))
}

// sessionName is the actor name of the n-th Session spawned for key; keyOf reverses it.
func sessionName(key string, n uint64) string { return fmt.Sprintf("%s|%d", key, n) }

func keyOf(self, parent *actor.PID) string {
	name := strings.TrimPrefix(self.Id, parent.Id+"/")
	if i := strings.LastIndexByte(name, '|'); i >= 0 {
		return name[:i]
	}
	return name
}

func stopDecider(any) actor.Directive { return actor.StopDirective }

func (s *Session) Receive(ctx actor.Context) {
	finished := false
	defer s.chargeOnPanic(ctx, &finished)
	var err error
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		err = s.onStarted(ctx)
	case *messages.Inbound:
		s.onInbound(ctx, msg)
	case *messages.TurnEvent:
		s.onTurnEvent(ctx, msg)
	case *turnFinished:
		err = s.onTurnFinished(ctx, msg)
	case *turnRecorded:
		s.onTurnRecorded(ctx, msg)
	case *commandRecorded:
		s.onCommandRecorded(ctx, msg)
	case *collectDue:
		s.onCollectDue(ctx, msg)
	case *messages.OutboundSent:
		s.onOutboundSent(ctx, msg)
	case *toolMessage:
		s.onToolMessage(ctx, msg)
	case *uploadsFetched:
		s.onUploadsFetched(msg) // session_access.go
	case *toolMessageRecorded:
		s.onToolMessageRecorded(ctx, msg)
	case *approvalNotice:
		s.onApprovalNotice(ctx, msg)
	case *approvalAnswer:
		s.onApprovalAnswer(ctx, msg)
	case *adminReset:
		s.onAdminReset(ctx, msg) // session_admin.go
	case *messages.CancelRun:
		if s.turn != nil {
			ctx.Send(s.turn, &cancelTurn{})
		}
	case *sessionsCall:
		s.onSessionsCall(ctx, msg) // a session tool of the running run (subagent.go)
	case *childSpawned:
		s.onChildSpawned(ctx, msg)
	case *followUpStored:
		s.onFollowUpStored(msg) // subagent_followup.go
	case *stopSubagent:
		s.onStopSubagent(ctx) // subagent_child.go
	case *childEnded:
		s.onChildEnded(ctx, msg)
	case *subagentMarked:
		s.onSubagentMarked(msg) // queued or running again (subagent_router.go)
	case *actor.Terminated:
		s.onTurnTerminated(ctx, msg)
	case *turnLost:
		err = s.onTurnLost(ctx, msg)
	case *outageRecorded:
		s.onOutageRecorded(ctx, msg)
	case *outageOver:
		s.onOutageOver(ctx, msg)
	case *outageGiveUp:
		s.onOutageGiveUp(ctx, msg)
	case *outageClosed:
		s.onOutageClosed(ctx, msg)
	case *runClosed:
		s.onRunClosed(ctx, msg)
	case *recordRetryDue:
		s.onRecordRetryDue(ctx, msg)
	case *actor.Stopping:
		s.stopCollect()
		s.stopWaiting()
		s.stopRecordRetry()
	case *idleCheck:
		s.onIdleCheck(ctx, msg) // the Router may passivate it (session_passivate.go)
	case *inboxChanged:
		err = s.onInboxChanged(ctx) // cluster mode: entries written on other nodes (session_cluster.go)
	}
	if err != nil {
		ev := s.log.Error()
		if errors.Is(err, persistence.ErrUnavailable) { // a storage outage: Storage logs it once; the sweep tries again
			ev = s.log.Debug()
		}
		ev.Err(err).Str("session", s.key).Str("msg", fmt.Sprintf("%T", ctx.Message())).Msg("session")
	}
	s.handling = s.handling[:0]
	finished = true
}

// onStarted loads the session from Storage: info, latest summary, transcript after it, the
// inbox (messages accepted but not answered) and replies not yet confirmed sent.
func (s *Session) onStarted(ctx actor.Context) error {
	s.key = keyOf(ctx.Self(), ctx.Parent())
	if s.deps.Cluster != nil {
		s.epoch = -1
		if e, ok := s.deps.Cluster.Owns(s.key); ok {
			s.epoch = e
		}
	}
	s.agent = s.deps.agents()[0]
	if id := agentOf(s.key); id != "" {
		if a := s.deps.agent(id); a != nil {
			s.agent = a
		}
	}
	var outbox []persistence.OutboxItem
	var inbox []persistence.InboxItem
	err := viewWaiting(s.deps.Store, func(r persistence.Reader) error { // waits out a storage outage
		var err error
		if s.info, _, err = r.Session(s.key); err != nil {
			return err
		}
		if s.history, s.cmp.seqs, s.cmp.hasSummary, err = loadHistory(r, s.key); err != nil {
			return err
		}
		if inbox, err = r.Inbox(s.key); err != nil {
			return err
		}
		if s.attempts, err = loadAttempts(r, s.key); err != nil {
			return err
		}
		if s.resume, s.resumeN, err = loadStarted(r, s.key); err != nil {
			return err
		}
		if s.awaiting, err = loadAwaiting(r, s.key); err != nil {
			return err
		}
		if s.wait, err = loadWait(r, s.key); err != nil {
			return err
		}
		if s.subs, err = loadSubagents(r, s.key); err != nil {
			return err
		}
		outbox, err = r.Outbox(s.key)
		return err
	})
	if err != nil {
		return fmt.Errorf("session: load: %w", err)
	}
	s.info.Key, s.info.AgentID = s.key, s.agent.ID
	for _, it := range outbox { // replies a crash kept from being confirmed: send them again
		out := it.Outbound
		out.OutboxSeq, out.SessionKey, out.Resent = it.Seq, s.key, true
		s.toConnector(ctx, &out)
	}
	var dead []persistence.InboxItem
	for _, it := range inbox { // accepted but not answered: answered together in one run
		it.InboxSeq = it.Seq
		s.maxInbox = it.Seq
		if s.attempts[it.Seq] >= maxAttempts {
			dead = append(dead, it)
			continue
		}
		s.handling = append(s.handling[:0], it.Seq)
		if s.takeHandover(ctx, &it.Inbound) { // session_cluster_handover.go
			continue
		}
		if it.Subagent != nil && s.onSubagentDone(ctx, &it.Inbound) {
			continue
		}
		if cmd, ok := s.command(&it.Inbound); ok {
			s.onCommand(ctx, it.Inbound, cmd)
			continue
		}
		s.queue.restore(it.Inbound)
	}
	s.handling = s.handling[:0]
	s.loadedInbox = s.maxInbox
	if len(dead) > 0 {
		s.deadLetter(ctx, dead)
	}
	s.dropStaleStarted(ctx)
	s.resumeWait(ctx)
	s.maybeStartTurn(ctx)
	return nil
}

func (s *Session) onInbound(ctx actor.Context, in *messages.Inbound) {
	if s.deps.Cluster != nil && s.tookAlready(in) {
		return
	}
	if s.deps.Cluster == nil && in.InboxSeq != 0 && in.InboxSeq <= s.maxInbox && (!in.System || in.InboxSeq <= s.loadedInbox) {
		return // already queued from the inbox when this Session started
	}
	s.maxInbox = max(s.maxInbox, in.InboxSeq)
	s.handling = append(s.handling[:0], in.InboxSeq)
	if s.takeHandover(ctx, in) {
		return
	}
	if cmd, ok := s.command(in); ok {
		s.onCommand(ctx, *in, cmd)
		return
	}
	if in.Subagent != nil && s.onSubagentDone(ctx, in) || s.droppedFollowUp(*in) {
		return
	}
	busy := s.turn != nil || s.saving || len(s.deferred) > 0
	act := s.onMessage(ctx, *in)
	if busy && !in.System {
		mode := s.queueSettings(in.Channel).Mode
		if mode == QueueSteer && act != arrivalSteer {
			mode = QueueFollowup // held back (the cap, or a sender with fewer tools than the run)
		}
		s.toConnector(ctx, &messages.TurnEvent{SessionKey: s.key, Kind: messages.MessageQueued,
			Channel: in.Channel, Account: in.Account, ChatID: in.ChatID, ThreadID: in.ThreadID, Label: queuedNote(mode)})
	}
}

// queuedNote tells the sender what happens to a message that arrived during a run.
func queuedNote(mode string) string {
	switch mode {
	case QueueSteer:
		return "noted: the running agent reads this at its next step"
	case QueueCollect:
		return "queued: answered with the others once you pause"
	case QueueInterrupt:
		return "queued: the current run stops and this is answered next"
	}
	return "queued: answered after the current run"
}

// maybeStartTurn starts a Turn for the queued messages when none is running (all of them,
// or only the first in followup mode; in collect mode only after the quiet window). With
// nothing to do it reports the session idle to the Router so it can be passivated.
func (s *Session) maybeStartTurn(ctx actor.Context) {
	if s.turn != nil || s.saving || len(s.deferred) > 0 || s.subs.ending {
		return
	}
	if s.startCompactTurn(ctx) { // a /compact waits (session_compact.go)
		return
	}
	if len(s.queue.waiting) == 0 {
		if s.wait != nil { // /stop or /new dropped what waited for the model
			s.dropWait(ctx)
		}
		if s.writes == 0 {
			ctx.Send(s.router, &sessionIdle{key: s.key})
		}
		return
	}
	if s.holdForModel(ctx) || s.waitForQuiet(ctx) { // session_outage.go
		return
	}
	s.answering = s.queue.take(s.queueSettings)
	s.noteAnswered(s.answering)
	s.followUpStarts(ctx) // a sub-agent of mode session takes more work (subagent_child.go)
	last := s.answering[len(s.answering)-1]
	if !last.System { // "the last channel the user used" stays a person's channel
		s.info.Channel, s.info.Account, s.info.ChatID, s.info.ThreadID = last.Channel, last.Account, last.ChatID, last.ThreadID
	}
	s.refreshAgent() // live.go: a reload may have changed the agent
	if s.skipOverBudget(ctx) {
		return
	}
	model, err := s.agent.model(s.info.Model)
	if err != nil { // a model a session switched to is no longer configured: back to the agent's
		s.log.Warn().Err(err).Str("session", s.key).Str("model", s.info.Model).Msg("session model unavailable; using the agent's")
		s.info.Model = ""
		model, _ = s.agent.model("")
	}
	s.turnReach = tools.Reach{Owner: s.private(s.answering)}
	model.MaxTokens = outputCap(model.MaxTokens, s.answering)
	history := s.runHistory()
	lead, answered := s.clientResults(history) // first: they answer the calls the history ends with (session_client.go)
	s.turnUser = append(lead, s.openingEntries()...)
	for _, in := range s.answering {
		if !answered(in) {
			s.turnUser = append(s.turnUser, userEntry(in, s.deps.redactor()))
		}
	}
	s.turnDrop = s.queue.takeDiscarded()
	s.turnSeq = turnSeqs.Add(1)
	s.turnTools = s.toolPolicy(s.answering...)
	s.turnReach.Uploads = uploadsOf(s.history, s.turnUser)
	s.tools, s.toolSent, s.approvals = nil, nil, nil
	owner := true
	for _, in := range s.answering {
		owner = owner && s.isOwner(in)
	}
	s.turn = ctx.Spawn(TurnProps(&turnInput{
		seq:        s.turnSeq,
		epoch:      s.epoch,
		agent:      s.agent,
		deps:       s.deps,
		sessionKey: s.key,
		channel:    last.Channel,
		chatType:   string(last.ChatType),
		history:    history,
		user:       s.turnUser,
		tools:      s.turnTools,
		reach:      s.turnReach,
		senderID:   last.SenderID,
		senderName: last.SenderName,
		chatID:     last.ChatID,
		owner:      owner,
		model:      model,
		reasoning:  s.info.Think,
		priority:   runPriority(s.key, s.answering),
		compact:    compactInput{hasSummary: s.cmp.hasSummary},
		storage:    s.storage,
		resume:     s.resume,
		resumeN:    s.resumeN,
		awaiting:   s.awaiting,
		timeout:    s.runTimeout(),
		client:     clientTools(s.answering),
	}))
	s.respawns = openSpawns(s.resume)
	s.resume, s.awaiting = nil, nil
	ctx.Send(s.router, &sessionBusy{key: s.key})
}
