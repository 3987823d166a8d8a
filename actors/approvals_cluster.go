package actors

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Approvals in cluster mode (Deps.Cluster). Every node runs an Approvals actor, and a call
// that must be approved waits on the node that runs its session, while the owner may answer
// anywhere: /approve in a chat another node runs, `reef security approvals` on a third node.
// The request is a row every node sees (approvals/pending). A decision, on whichever node, is
// one transaction that removes the row, writes the audit record and puts the decision in the
// asking session's inbox (messages.Inbound.Approval): the removal makes it exactly once (a
// second node's decision finds no row and is told so), and the inbox carries it to the node
// that runs the session, as it carries a /stop or a sub-agent's completion. That Session hands
// it to its Approvals (approvalSettle), which gives it to the waiting call. Decisions made
// here take the same way, so a call learns its decision once, from one place. The prefixes
// allowed always and the list of what waits are read from the store, where other nodes
// change them; a call resumed on a node that did not know its request finds it there.

// The cluster messages of Approvals.
type (
	// approvalSettle: Session → Approvals, a decision the session's inbox brought.
	approvalSettle struct {
		key string
		d   messages.ApprovalDecided
	}
	// askFresh is a new request's ask with the prefixes as the store holds them.
	askFresh struct {
		ask      approvalAsk
		prefixes []access.ExecPrefix
		err      error
	}
	// resumedRead is what the store holds for a resumed call this node did not know: its
	// request, or the decision waiting in its session's inbox.
	resumedRead struct {
		ask approvalAsk
		req *access.ExecRequest
		d   *messages.ApprovalDecided
		err error
	}
	// listRead is /approvals's read of the store.
	listRead struct {
		msg      *approvalList
		reqs     []access.ExecRequest
		prefixes []access.ExecPrefix
		err      error
	}
)

// approvalSource is the Source of an inbox entry that carries a decision.
const approvalSource = "approval:"

// readPrefixes reads the prefixes allowed always before a new request is decided on them.
func (a *Approvals) readPrefixes(ctx actor.Context, msg *approvalAsk) {
	self, root, store, ask := ctx.Self(), ctx.ActorSystem().Root, a.deps.Store, *msg
	go func() {
		var prefixes []access.ExecPrefix
		err := store.View(func(r persistence.Reader) error {
			var err error
			prefixes, err = access.ExecPrefixes(r)
			return err
		})
		root.Send(self, &askFresh{ask: ask, prefixes: prefixes, err: err})
	}()
}

// onAskFresh goes on with a new request; when the prefixes could not be read, the owner is
// asked rather than a revoked prefix trusted.
func (a *Approvals) onAskFresh(ctx actor.Context, msg *askFresh) {
	if msg.err != nil {
		a.log.Error().Err(msg.err).Msg("could not read the prefixes allowed always; asking the owner")
		a.askNow(ctx, &msg.ask, false)
		return
	}
	a.prefixes = msg.prefixes
	a.askNow(ctx, &msg.ask, true)
}

// decideShared writes a decision in cluster mode: the request removed, the audit record, and
// (unless withdrawn: its run ended) the decision in the asking session's inbox. The request
// may be one this node never saw.
func (a *Approvals) decideShared(ctx actor.Context, id, decision, by string, cmd *approvalDecide) {
	if w := a.waits[id]; w != nil {
		if w.deciding || w.decided {
			if cmd != nil {
				a.answer(ctx, cmd.in, cmd.replyTo, cmd.reply, "", access.ErrNoExecRequest)
			}
			return
		}
		w.deciding = true
	}
	at := a.deps.now()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	var d access.ExecDecision // set by Apply, read by Done, both on the commit goroutine
	ctx.Send(a.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			var err error
			if d, err = access.DecideExec(tx, id, decision, by, at); err != nil || decision == access.DecisionWithdrawn {
				return err
			}
			_, err = tx.AppendInbox(d.SessionKey, approvalEntry(d))
			return err
		},
		Done: func(err error) { root.Send(self, &approvalWritten{id: id, cmd: cmd, d: d, err: err}) },
	})
}

// approvalEntry is the inbox entry that takes d to the session that asked.
func approvalEntry(d access.ExecDecision) messages.Inbound {
	return messages.Inbound{System: true, Source: approvalSource + d.ID, SessionKey: d.SessionKey, Time: d.At,
		Approval: &messages.ApprovalDecided{ID: d.ID, CallID: d.CallID, Decision: d.Decision, By: d.By, At: d.At}}
}

// onWrittenShared acts on a decision once it is durable, or on finding that another node
// decided first. A waiter on this node keeps its wait until its session hands the decision
// over (onSettle).
func (a *Approvals) onWrittenShared(ctx actor.Context, msg *approvalWritten) {
	w := a.waits[msg.id]
	if w != nil {
		w.deciding = false
	}
	if msg.err != nil && !errors.Is(msg.err, access.ErrNoExecRequest) {
		a.log.Error().Err(msg.err).Str("approval", msg.id).Msg("could not record an approval decision")
		if msg.cmd != nil {
			a.answer(ctx, msg.cmd.in, msg.cmd.replyTo, msg.cmd.reply, "", errors.New("could not save the decision (storage error); try again"))
		}
		return
	}
	if w != nil { // decided, here or (no request left) on another node
		if w.stop != nil {
			w.stop()
		}
		w.decided = true
		if w.waiter == nil || msg.err == nil && msg.d.Decision == access.DecisionWithdrawn {
			delete(a.waits, msg.id)
		}
	}
	if msg.err != nil {
		if msg.cmd != nil {
			a.answer(ctx, msg.cmd.in, msg.cmd.replyTo, msg.cmd.reply, "", access.ErrNoExecRequest)
		}
		return
	}
	d := msg.d
	if d.Decision == access.DecisionAlways {
		a.prefixes = append(a.prefixes, access.ExecPrefix{Prefix: d.Prefix, By: d.By, Added: d.At, FromID: d.ID})
	}
	a.logDecision(d)
	if msg.cmd != nil {
		a.answer(ctx, msg.cmd.in, msg.cmd.replyTo, msg.cmd.reply, decisionText(d, true), nil)
	}
}

// onSettle gives a decision the session's inbox brought to the call that waits for it, or
// keeps it for the call when it resumes (its session is starting).
func (a *Approvals) onSettle(ctx actor.Context, msg *approvalSettle) {
	s := msg.d
	d := access.ExecDecision{ExecRequest: access.ExecRequest{ID: s.ID, SessionKey: msg.key, CallID: s.CallID},
		Decision: s.Decision, By: s.By, At: s.At}
	if w := a.waits[s.ID]; w != nil {
		if w.stop != nil {
			w.stop()
		}
		delete(a.waits, s.ID)
		if w.waiter != nil {
			d.ExecRequest = w.req
			ctx.Send(w.waiter, &approvalDecided{d: d})
			ctx.Unwatch(w.waiter)
			return
		}
	}
	a.keepSettled(d)
}

// keepSettled keeps a decision nobody waits for, for the call of its session that resumes
// (Session.onStarted hands the decisions over before the run resumes). One whose call never
// comes (its run ended) is dropped once no call could still wait for it.
func (a *Approvals) keepSettled(d access.ExecDecision) {
	horizon := a.deps.now().Add(-a.deps.approvalSettings().timeout() - approvalBackstop)
	for k, old := range a.settled {
		if old.At.Before(horizon) {
			delete(a.settled, k)
		}
	}
	a.settled[d.SessionKey+"\n"+d.CallID] = d
}

// readResumed looks in the store for a resumed call this node knows nothing of: its request
// (asked on a node that has since lost the session), or the decision already in its
// session's inbox.
func (a *Approvals) readResumed(ctx actor.Context, msg *approvalAsk) {
	self, root, store, ask := ctx.Self(), ctx.ActorSystem().Root, a.deps.Store, *msg
	go func() {
		read := &resumedRead{ask: ask}
		read.err = store.View(func(r persistence.Reader) error {
			reqs, err := access.ExecRequests(r)
			if err != nil {
				return err
			}
			for i, req := range reqs {
				if req.SessionKey == ask.req.SessionKey && req.CallID == ask.req.CallID {
					read.req = &reqs[i]
				}
			}
			inbox, err := r.Inbox(ask.req.SessionKey)
			for _, it := range inbox {
				if d := it.Approval; d != nil && it.System && d.CallID == ask.req.CallID {
					read.d = d
				}
			}
			return err
		})
		root.Send(self, read)
	}()
}

// onResumedRead joins the resumed call to its request, gives it its decision, or, when the
// store has neither, tells it the request ended (withdrawn).
func (a *Approvals) onResumedRead(ctx actor.Context, msg *resumedRead) {
	ask := msg.ask
	key := ask.req.SessionKey + "\n" + ask.req.CallID
	if d, ok := a.settled[key]; ok { // handed over while the store was read
		delete(a.settled, key)
		ctx.Send(ask.waiter, &approvalDecided{d: d})
		return
	}
	switch {
	case msg.err != nil:
		a.log.Error().Err(msg.err).Str("session", ask.req.SessionKey).Msg("could not read a resumed call's approval request")
	case msg.d != nil:
		ctx.Send(ask.waiter, &approvalDecided{d: access.ExecDecision{ExecRequest: ask.req, Decision: msg.d.Decision,
			By: msg.d.By, At: msg.d.At}})
		return
	case msg.req != nil && a.waits[msg.req.ID] == nil:
		w := &approvalWait{req: *msg.req, waiter: ask.waiter, stored: true}
		a.waits[w.req.ID] = w
		ctx.Watch(ask.waiter)
		a.arm(ctx, w)
		a.store(ctx, w, false) // asks the owner again, as after a restart
		return
	}
	ctx.Send(ask.waiter, &approvalDecided{d: access.ExecDecision{ExecRequest: ask.req, Decision: access.DecisionWithdrawn,
		By: "reef", At: a.deps.now()}})
}

// readList reads what waits and the prefixes for /approvals.
func (a *Approvals) readList(ctx actor.Context, msg *approvalList) {
	self, root, store := ctx.Self(), ctx.ActorSystem().Root, a.deps.Store
	go func() {
		read := &listRead{msg: msg}
		read.err = store.View(func(r persistence.Reader) error {
			var err error
			if read.reqs, err = access.ExecRequests(r); err != nil {
				return err
			}
			read.prefixes, err = access.ExecPrefixes(r)
			return err
		})
		root.Send(self, read)
	}()
}

func (a *Approvals) onListRead(ctx actor.Context, msg *listRead) {
	text := listText(msg.reqs, msg.prefixes, a.deps.now())
	if msg.err != nil {
		text = "Could not read the approval requests (storage error); try again."
	}
	ctx.Send(msg.msg.replyTo, &approvalAnswer{in: msg.msg.in, text: text})
}
