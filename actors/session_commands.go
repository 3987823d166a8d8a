package actors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Slash commands are answered by the Session itself, without a model call. Only the text a
// person typed is parsed (parseCommand), and only people allowed to steer the agent may use
// them: anyone in a direct chat that passed the channel's access rules, the terminal, and in
// groups only senders the channel's allowFrom names. Anyone else's "/new" (or
// "/status@reef_bot") gets a short refusal and never reaches the model; a bare "stop" from
// them is an ordinary message.

type (
	// deferredCommand waits for the running Turn to stop (/new, /reset during a run).
	deferredCommand struct {
		in  messages.Inbound
		cmd command
	}
	// commandRecorded reports that a command's answer (and its effects) are durable.
	commandRecorded struct {
		by      *Session // see turnRecorded
		out     *messages.Outbound
		err     error
		seqs    []uint64          // the inbox entries the answer removes
		closing bool              // the write closed a command whose answer could not be stored (session_record.go)
		then    *messages.Inbound // stored with the answer; queued once it is recorded (the greeting)
	}
)

// command parses in as a command if its sender may give one. In the terminal a word after
// a slash that is neither a command nor one of the agent's skills is answered as an unknown
// command ("/stauts"), not sent to the model; "/tmp/x is full" stays a message.
func (s *Session) command(in *messages.Inbound) (command, bool) {
	if in.Stateless { // its session lives for one run: there is nothing for a command to act on
		return command{}, false
	}
	cmd, ok := parseCommand(in)
	if !ok && in.Channel == "terminal" && !in.System {
		if word, found := unknownCommand(in.Text); found && !s.isSkill(word) {
			return command{name: "unknown", args: []string{word}}, true
		}
	}
	switch {
	case !ok:
		return command{}, false
	case s.mayCommand(in):
		return cmd, true
	case cmd.bare:
		return command{}, false // "stop" from someone who may not command is just a word
	}
	return command{name: "refused", args: []string{cmd.name}}, true
}

// unknownCommand returns the word of a text that looks like a slash command: "/word" or
// "/word args", the word made of letters, digits, '-' and '_'.
func unknownCommand(text string) (string, bool) {
	word, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	word, ok := strings.CutPrefix(word, "/")
	if !ok || word == "" {
		return "", false
	}
	for _, r := range word {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "", false
		}
	}
	return word, true
}

// isSkill reports whether name is one of the agent's skills ("/pdf" asks for the pdf skill).
func (s *Session) isSkill(name string) bool {
	ws, _ := s.agent.loadWorkspace() // cached for a second; loaded for every run anyway
	return slices.ContainsFunc(ws.Skills, func(sk agent.Skill) bool { return strings.EqualFold(sk.Name, name) })
}

// mayCommand reports whether the sender of in may use commands.
func (s *Session) mayCommand(in *messages.Inbound) bool {
	return s.deps.rules(channels.ID(in.Channel, in.Account)).MayCommand(in)
}

// onCommand runs a command; each one answers exactly once.
func (s *Session) onCommand(ctx actor.Context, in messages.Inbound, cmd command) {
	s.log.Info().Str("session", s.key).Str("command", cmd.name).Msg("command")
	switch cmd.name {
	case "stop":
		s.stopRun(ctx, in)
	case "new", "reset":
		s.reset(ctx, in, cmd)
	case "status":
		s.answer(ctx, in, s.statusText(), nil)
	case "model":
		s.answer(ctx, in, s.setModel(cmd.args, s.isOwner(in)), nil)
	case "think":
		s.answer(ctx, in, s.setThink(cmd.args, s.isOwner(in)), nil)
	case "reasoning":
		s.answer(ctx, in, s.setReasoning(cmd.args), nil)
	case "queue":
		s.answer(ctx, in, s.setQueue(cmd.args, in.Channel), nil)
	case "compact":
		s.compactNow(ctx, in, cmd.rest)
	case "approve", "deny", "approvals":
		s.onApprovalCommand(ctx, in, cmd)
	case "subagents":
		s.answer(ctx, in, s.subagentsCommand(ctx, cmd.args), nil) // subagent_commands.go
	case "refused":
		s.answer(ctx, in, fmt.Sprintf("Only the owner can use /%s here; it was not sent to the model.", cmd.args[0]), nil)
	case "unknown":
		s.answer(ctx, in, fmt.Sprintf("/%s is not a command, so it was not sent to the model. /help lists the commands.", cmd.args[0]), nil)
	default:
		s.answer(ctx, in, helpText(), nil)
	}
}

// stopRun cancels the running run (its "Stopped." is the answer) and drops waiting messages.
func (s *Session) stopRun(ctx actor.Context, in messages.Inbound) {
	children := s.stopChildren(ctx) // down the tree (subagent_child.go)
	procs := s.killProcesses(true)  // processes.go
	waiting := s.queue.len()
	s.dropWaiting(ctx)
	if s.turn != nil { // the run's "Stopped." answers; the processes die all the same
		if in.InboxSeq != 0 {
			s.turnDrop = append(s.turnDrop, in.InboxSeq)
		}
		s.queue.interrupted = false
		ctx.Send(s.turn, &cancelTurn{})
		return
	}
	text := "Nothing is running."
	if waiting > 0 {
		text = fmt.Sprintf("Stopped: dropped %d waiting messages.", waiting)
	}
	if children > 0 {
		text = joinLines(strings.TrimPrefix(text, "Nothing is running."), fmt.Sprintf("Stopped %d sub-agent(s).", children))
	}
	if procs > 0 {
		text = joinLines(strings.TrimPrefix(text, "Nothing is running."), fmt.Sprintf("Killed %d background process(es).", procs))
	}
	s.answer(ctx, in, text, nil)
}

// reset starts a fresh session (/new [model], /reset): a reset snapshot makes the model see
// nothing before it, the transcript stays stored (reef sessions export shows it), and the
// next run opens with the session start routine. A running run is stopped first, and the
// reset waits until that run is recorded; messages sent after the command then belong to
// the new session.
func (s *Session) reset(ctx actor.Context, in messages.Inbound, cmd command) {
	if cmd.name == "new" && len(cmd.args) > 0 { // a model that cannot be used changes nothing
		label, err := s.resolveModel(cmd.args[0], s.isOwner(in))
		if err != nil {
			s.answer(ctx, in, err.Error(), nil)
			return
		}
		cmd.args = []string{label}
	}
	s.killProcesses(false) // a new session: the old one's processes end with it
	if s.turn != nil {
		s.dropWaiting(ctx)
		s.deferred = append(s.deferred, deferredCommand{in: in, cmd: cmd})
		ctx.Send(s.turn, &cancelTurn{})
		return
	}
	var before []messages.ChatMessage
	for _, q := range s.queue.waiting { // sent before the command: kept in the old part of the transcript
		before = append(before, userEntry(q, s.deps.redactor()))
	}
	s.dropWaiting(ctx)
	s.resetNow(ctx, in, cmd, before)
}

// resetNow records the reset.
func (s *Session) resetNow(ctx actor.Context, in messages.Inbound, cmd command, entries []messages.ChatMessage) {
	if cmd.name == "new" && len(cmd.args) > 0 {
		s.info.Model = cmd.args[0] // resolved by reset ("" is the agent's own model)
	}
	note := ""
	if m, err := s.agent.model(s.info.Model); err == nil {
		note = " Model: " + m.Label + "."
	}
	now := s.deps.now()
	entries = append(entries, messages.ChatMessage{Role: messages.RoleSystem, Time: now,
		Content: fmt.Sprintf("The user started a new session (/%s).", cmd.name)})
	s.history = nil
	s.cmp.seqs, s.cmp.hasSummary = nil, false // the reset snapshot hides everything (session_compact.go)
	s.info.Fresh, s.info.Started = true, now
	key := s.key
	greet := s.greeting(in, now) // session_greet.go
	s.answerThen(ctx, in, "New session started."+note, func(tx persistence.Tx) error {
		seqs, err := tx.AppendMessages(key, entries...)
		if err != nil {
			return err
		}
		if err := tx.PutSnapshot(key, persistence.Snapshot{Seq: seqs[len(seqs)-1], Created: now, Kind: persistence.SnapshotReset}); err != nil {
			return err
		}
		if greet != nil {
			greet.InboxSeq, err = tx.AppendInbox(key, *greet)
		}
		return err
	}, greet)
}

// runDeferred runs the resets that waited for the run to end.
func (s *Session) runDeferred(ctx actor.Context) {
	deferred := s.deferred
	s.deferred = nil
	for _, d := range deferred {
		s.resetNow(ctx, d.in, d.cmd, nil)
	}
}

// answer records a command's answer — with apply's effects, the session info, the removal
// of the command's inbox entry and of dropped messages — in one transaction, then sends it.
// During a run the answer is a new message, so the run's draft stays for its reply.
func (s *Session) answer(ctx actor.Context, in messages.Inbound, text string, apply func(persistence.Tx) error) {
	s.answerThen(ctx, in, text, apply, nil)
}

// answerThen is answer, and then, which apply stored in the inbox, is queued once the
// answer is recorded.
func (s *Session) answerThen(ctx actor.Context, in messages.Inbound, text string, apply func(persistence.Tx) error, then *messages.Inbound) {
	seqs := s.queue.takeDiscarded()
	if in.InboxSeq != 0 {
		seqs = append(seqs, in.InboxSeq)
	}
	now := s.deps.now()
	if s.info.Created.IsZero() {
		s.info.Created = now
	}
	s.info.Updated = now
	info := s.info
	out := &messages.Outbound{Channel: in.Channel, Account: in.Account, ChatID: in.ChatID, ThreadID: in.ThreadID,
		ReplyToID: in.MessageID, Text: text, SessionKey: s.key, Direct: s.turn != nil || s.saving}
	key, self, root := s.key, ctx.Self(), ctx.ActorSystem().Root
	s.writes++
	attempts := s.attempts // never changed after the Session loaded it
	// The WebChat page redraws its conversation from the store after a reload: the exchange
	// it showed is kept for it (never for the model), the only channel that needs it.
	shown := in.Channel == "webchat" && !in.System && text != ""
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if apply != nil {
				if err := apply(tx); err != nil {
					return err
				}
			}
			var outbox []*messages.Outbound
			if out.Channel != "" {
				outbox = append(outbox, out)
			}
			if shown {
				if err := persistence.PutShown(tx, key, persistence.Shown{Command: in.Text, Answer: text, Time: now}); err != nil {
					return err
				}
			}
			return settle(tx, key, seqs, outbox, info, attempts)
		},
		Done: func(err error) { root.Send(self, &commandRecorded{by: s, out: out, err: err, seqs: seqs, then: then}) },
	})
}

func (s *Session) onCommandRecorded(ctx actor.Context, msg *commandRecorded) {
	if msg.by != s {
		return
	}
	s.writes--
	if msg.err != nil { // closed with a notice, or left for a restart (session_record.go)
		s.commandFailed(ctx, msg)
		return
	}
	if msg.out.Channel != "" {
		s.toConnector(ctx, msg.out)
		if !msg.out.Direct && msg.then == nil { // answered outside a run: that ends the exchange (reef chat reads on); a greeting's run ends it later
			s.toConnector(ctx, &messages.TurnEvent{SessionKey: s.key, Kind: messages.TurnFinal,
				Channel: msg.out.Channel, Account: msg.out.Account, ChatID: msg.out.ChatID, ThreadID: msg.out.ThreadID})
		}
	}
	if msg.then != nil {
		s.onInbound(ctx, msg.then) // starts the greeting's run
		return
	}
	s.maybeStartTurn(ctx)
}

// joinLines joins non-empty lines.
func joinLines(lines ...string) string {
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), "\n")
}
