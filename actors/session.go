package actors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Session owns one conversation: its transcript, the queue of accepted messages, and at most
// one running Turn. Storage holds the truth; a restarted or respawned Session reloads it and
// runs whatever its inbox still holds.
type Session struct {
	key        string
	deps       *Deps
	agent      *Agent
	storage    *actor.PID
	router     *actor.PID
	connectors map[string]*actor.PID
	log        zerolog.Logger

	info     persistence.SessionInfo
	history  []messages.ChatMessage // what the model sees: latest summary + entries after it
	queue    []messages.Inbound     // accepted messages waiting for a run
	maxInbox uint64                 // highest inbox seq queued, to ignore re-deliveries
	received int                    // inbound messages received from the Router

	turn      *actor.PID
	turnSeq   uint64
	answering []messages.Inbound // what the running turn answers
	turnUser  []messages.ChatMessage
	saving    bool // a finished turn is being committed
}

// Session self-messages.
type (
	turnRecorded struct {
		outbox []*messages.Outbound
		err    error
	}
	turnLost struct{ seq uint64 }
)

// SessionProps is the recipe for every Session. One Props serves all of them, so an idle
// Session costs only its own state: a Session learns its key from its actor name, which the
// Router sets with sessionName.
func SessionProps(deps *Deps, storage, router *actor.PID, connectors map[string]*actor.PID) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &Session{deps: deps, storage: storage, router: router, connectors: connectors, log: deps.Log}
	},
		actor.WithReceiverMiddleware(recoverMiddleware(deps.Log)),
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
	var err error
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		err = s.onStarted(ctx)
	case *messages.Inbound:
		s.onInbound(ctx, msg)
	case *messages.TurnEvent:
		s.toConnector(ctx, msg)
	case *turnFinished:
		err = s.onTurnFinished(ctx, msg)
	case *turnRecorded:
		s.onTurnRecorded(ctx, msg)
	case *messages.CancelRun:
		if s.turn != nil {
			ctx.Send(s.turn, &cancelTurn{})
		}
	case *actor.Terminated:
		s.onTurnTerminated(ctx, msg)
	case *turnLost:
		err = s.onTurnLost(ctx, msg)
	}
	if err != nil {
		s.log.Error().Err(err).Str("session", s.key).Str("msg", fmt.Sprintf("%T", ctx.Message())).Msg("session")
	}
}

// onStarted loads the session from Storage: info, latest summary, transcript after it, the
// inbox (messages accepted but not answered) and replies not yet confirmed sent.
func (s *Session) onStarted(ctx actor.Context) error {
	s.key = keyOf(ctx.Self(), ctx.Parent())
	s.agent = s.deps.Agents[0]
	if id := agentOf(s.key); id != "" {
		if a := s.deps.agent(id); a != nil {
			s.agent = a
		}
	}
	var outbox []persistence.OutboxItem
	err := s.deps.Store.View(func(r persistence.Reader) error {
		var err error
		if s.info, _, err = r.Session(s.key); err != nil {
			return err
		}
		if s.history, err = loadHistory(r, s.key); err != nil {
			return err
		}
		inbox, err := r.Inbox(s.key)
		if err != nil {
			return err
		}
		for _, it := range inbox {
			it.InboxSeq = it.Seq
			s.queue = append(s.queue, it.Inbound)
			s.maxInbox = it.Seq
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
		out.OutboxSeq, out.SessionKey = it.Seq, s.key
		s.toConnector(ctx, &out)
	}
	s.maybeStartTurn(ctx)
	return nil
}

// loadHistory returns the latest compaction summary (as a system entry) and every entry after it.
func loadHistory(r persistence.Reader, key string) ([]messages.ChatMessage, error) {
	var history []messages.ChatMessage
	snap, ok, err := r.LatestSnapshot(key)
	if err != nil {
		return nil, err
	}
	if ok {
		history = append(history, messages.ChatMessage{Role: messages.RoleSystem,
			Content: "Summary of the earlier conversation:\n" + snap.Summary, Time: snap.Created})
	}
	entries, err := r.Messages(key, snap.Seq)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		history = append(history, e.ChatMessage)
	}
	return history, nil
}

func (s *Session) onInbound(ctx actor.Context, in *messages.Inbound) {
	s.received++
	if in.InboxSeq != 0 && in.InboxSeq <= s.maxInbox {
		return // already queued from the inbox when this Session started
	}
	s.maxInbox = max(s.maxInbox, in.InboxSeq)
	s.queue = append(s.queue, *in)
	s.maybeStartTurn(ctx)
}

// maybeStartTurn starts a Turn for every queued message when none is running; otherwise it
// reports the session idle to the Router so it can be passivated.
func (s *Session) maybeStartTurn(ctx actor.Context) {
	if s.turn != nil || s.saving {
		return
	}
	if len(s.queue) == 0 {
		ctx.Send(s.router, &sessionIdle{key: s.key, seen: s.received})
		return
	}
	s.answering, s.queue = s.queue, nil
	last := s.answering[len(s.answering)-1]
	if !last.System { // "the last channel the user used" stays a person's channel
		s.info.Channel, s.info.Account, s.info.ChatID, s.info.ThreadID = last.Channel, last.Account, last.ChatID, last.ThreadID
	}
	user := make([]messages.ChatMessage, len(s.answering))
	for i, in := range s.answering {
		if in.System {
			user[i] = messages.ChatMessage{Role: messages.RoleSystem, Content: in.Text, Time: in.Time}
		} else {
			user[i] = messages.ChatMessage{Role: messages.RoleUser, Content: agent.FormatInbound(in), Time: in.Time}
		}
	}
	s.turnUser = user
	s.turnSeq++
	s.turn = ctx.Spawn(TurnProps(&turnInput{
		seq:        s.turnSeq,
		agent:      s.agent,
		deps:       s.deps,
		sessionKey: s.key,
		channel:    last.Channel,
		chatType:   string(last.ChatType),
		history:    s.history[:len(s.history):len(s.history)],
		user:       user,
		owner:      s.isOwner(last),
	}))
	ctx.Send(s.router, &sessionBusy{key: s.key})
}

func (s *Session) toConnector(ctx actor.Context, msg any) {
	var channel string
	switch m := msg.(type) {
	case *messages.TurnEvent:
		if len(s.answering) == 0 {
			return
		}
		last := s.answering[len(s.answering)-1]
		m.Channel, m.ChatID, m.ThreadID, channel = last.Channel, last.ChatID, last.ThreadID, last.Channel
	case *messages.Outbound:
		channel = m.Channel
	}
	if pid := s.connectors[channel]; pid != nil {
		ctx.Send(pid, msg)
	}
}

// isOwner reports whether in comes from the owner: the terminal, or a direct message from a
// sender the channel's allowFrom names explicitly. A system event runs with the owner's
// rights when it was scheduled from an owner's session.
func (s *Session) isOwner(in messages.Inbound) bool {
	if in.System || in.Channel == "terminal" {
		return true
	}
	acc := s.deps.Access[in.Channel]
	if acc == nil || in.ChatType != messages.ChatDirect {
		return false
	}
	return slices.Contains(acc.AllowFrom, in.SenderID)
}

func agentOf(key string) string {
	rest, ok := strings.CutPrefix(key, "agent:")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}
