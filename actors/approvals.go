package actors

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Approvals owns the exec commands waiting for the owner's approval. A ToolRun that must ask
// sends approvalAsk and waits for approvalDecided; Approvals stores the request (bbolt,
// access.ExecRequest), tells the owner in their own chat (approval_notify.go) and decides it
// when the owner answers (/approve, /deny, or the CLI through Runtime), when its timeout
// passes (denied), or when the run that asked ends (withdrawn). Each decision is one Storage
// write that removes the request and writes its audit record, so it happens exactly once.
//
// A restart keeps the requests: Approvals reloads them and re-arms their timeouts, and the
// Session that reloads the asking run resumes the call (Turn.resume), whose ToolRun asks again
// with resumed set and is attached to the stored request; an /approve still works.
type Approvals struct {
	deps    *Deps
	storage *actor.PID
	log     zerolog.Logger

	waits    map[string]*approvalWait // by request id
	prefixes []access.ExecPrefix      // allowed always
	// settled holds decisions made while nobody waited (after a restart, before the run
	// resumed), by "<session key>\n<call id>", for the resumed call to collect.
	settled map[string]access.ExecDecision
}

// approvalWait is one pending request.
type approvalWait struct {
	req      access.ExecRequest
	waiter   *actor.PID  // the ToolRun; nil after a restart until the call resumes, or once it stopped
	stop     func() bool // cancels the timeout
	stored   bool        // the request is durable
	deciding bool        // a decision is being written
	decided  bool        // cluster mode: decided; the waiter gets it from the session's inbox (approvals_cluster.go)
}

// ApprovalSettings say when exec asks the owner first (tools.exec.approvals).
type ApprovalSettings struct {
	Mode    string        // access.ApprovalsOff (also ""), ApprovalsOwner or ApprovalsAlways
	Timeout time.Duration // how long a request waits before it counts as denied; default 10 min
}

// DefaultApprovalTimeout is ApprovalSettings.Timeout's default.
const DefaultApprovalTimeout = 10 * time.Minute

// asks reports whether exec in a run asks first; owner says whether the owner started the run.
func (s ApprovalSettings) asks(owner bool) bool {
	return s.Mode == access.ApprovalsAlways || s.Mode == access.ApprovalsOwner && !owner
}

func (s ApprovalSettings) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultApprovalTimeout
	}
	return s.Timeout
}

// auditKept is how many audit records the store keeps (older ones are pruned at start).
const auditKept = 1000

// Approvals messages.
type (
	// approvalAsk asks for a decision on req (its ID unset) for the ToolRun waiter. resumed
	// marks a call a restart interrupted while it waited: it joins its stored request.
	approvalAsk struct {
		req     access.ExecRequest
		waiter  *actor.PID
		resumed bool
	}
	// approvalPending tells the waiter its request is stored and where the owner was asked
	// ("" when no owner chat was found: only the CLI can decide it).
	approvalPending struct {
		req     access.ExecRequest
		reached string
	}
	// approvalDecided is the decision, to the waiter.
	approvalDecided struct{ d access.ExecDecision }
	// approvalDecide decides a request for the owner (by: "terminal", "telegram:42", "cli").
	// The answer goes to replyTo as approvalAnswer (with in), or to reply.
	approvalDecide struct {
		id, decision, by string
		in               messages.Inbound
		replyTo          *actor.PID
		reply            chan<- approvalAnswer
	}
	// approvalAnswer is the text of the answer to a command (/approve, /deny, /approvals).
	approvalAnswer struct {
		in   messages.Inbound
		text string
		err  error
	}
	// approvalWithdraw: the run that asked ended; nothing will run.
	approvalWithdraw struct{ id string }
	// approvalRevoke removes an allow-always prefix.
	approvalRevoke struct {
		prefix  string
		in      messages.Inbound
		replyTo *actor.PID
		reply   chan<- approvalAnswer
	}
	// approvalList asks for the /approvals text.
	approvalList struct {
		in      messages.Inbound
		replyTo *actor.PID
	}

	approvalStored struct {
		again   bool // a resumed call's request, asked again after a restart
		id      string
		target  *messages.Outbound // where the owner is asked; nil: nowhere
		reached string
		err     error
	}
	approvalWritten struct {
		id  string
		cmd *approvalDecide // nil for a timeout or a withdrawal
		d   access.ExecDecision
		err error
	}
	prefixAudited struct {
		ask approvalAsk
		d   access.ExecDecision
		err error
	}
	prefixRevoked struct {
		msg *approvalRevoke
		err error
	}
	approvalExpired struct{ id string }
)

// approvalsPID is the PID of the Approvals actor under the Gateway gw.
func approvalsPID(gw *actor.PID) *actor.PID { return actor.NewPID(gw.Address, gw.Id+"/approvals") }

// ApprovalsProps is the recipe for the Approvals actor.
func ApprovalsProps(deps *Deps, storage *actor.PID) *actor.Props {
	log := deps.Log.With().Str("actor", "approvals").Logger()
	return actor.PropsFromProducer(func() actor.Actor {
		return &Approvals{deps: deps, storage: storage, log: log}
	}, actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(log)))
}

func (a *Approvals) Receive(ctx actor.Context) {
	var err error
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		err = a.onStarted(ctx)
	case *approvalAsk:
		a.onAsk(ctx, msg, true)
	case *approvalStored:
		a.onStored(ctx, msg)
	case *prefixAudited:
		a.onPrefixAudited(ctx, msg)
	case *approvalDecide:
		a.onDecide(ctx, msg)
	case *approvalExpired:
		a.decide(ctx, msg.id, access.DecisionTimeout, "reef", nil)
	case *approvalWithdraw:
		a.decide(ctx, msg.id, access.DecisionWithdrawn, "reef", nil)
	case *approvalWritten:
		a.onWritten(ctx, msg)
	case *approvalRevoke:
		a.onRevoke(ctx, msg)
	case *prefixRevoked:
		a.onRevoked(ctx, msg)
	case *approvalList:
		a.onList(ctx, msg)
	case *approvalSettle:
		a.onSettle(ctx, msg) // cluster mode (approvals_cluster.go), like the rest of this block
	case *askFresh:
		a.onAskFresh(ctx, msg)
	case *resumedRead:
		a.onResumedRead(ctx, msg)
	case *listRead:
		a.onListRead(ctx, msg)
	case *actor.Terminated:
		a.onWaiterGone(msg.Who)
	case *actor.Stopping, *actor.Restarting: // the next instance re-arms from the store
		for _, w := range a.waits {
			if w.stop != nil {
				w.stop()
			}
		}
	}
	if err != nil {
		a.log.Error().Err(err).Str("msg", fmt.Sprintf("%T", ctx.Message())).Msg("approvals")
	}
}

// onStarted loads the pending requests and the prefixes, and re-arms the timeouts (a request
// whose time ran out while reef was down times out now). Like a Session's, this one read
// happens in Receive: the Approvals actor starts before the Router, so no ask overtakes it.
func (a *Approvals) onStarted(ctx actor.Context) error {
	a.waits, a.settled = map[string]*approvalWait{}, map[string]access.ExecDecision{}
	var reqs []access.ExecRequest
	err := a.deps.Store.View(func(r persistence.Reader) error {
		var err error
		if reqs, err = access.ExecRequests(r); err != nil {
			return err
		}
		a.prefixes, err = access.ExecPrefixes(r)
		return err
	})
	if err != nil {
		return fmt.Errorf("approvals: load: %w", err)
	}
	for _, req := range reqs {
		w := &approvalWait{req: req, stored: true}
		a.waits[req.ID] = w
		a.arm(ctx, w)
	}
	ctx.Send(a.storage, &storeWrite{Apply: func(tx persistence.Tx) error { return access.PruneExecAudit(tx, auditKept) },
		Done: func(error) {}})
	return nil
}

// arm starts a request's timeout.
func (a *Approvals) arm(ctx actor.Context, w *approvalWait) {
	self, root, id := ctx.Self(), ctx.ActorSystem().Root, w.req.ID
	d := max(w.req.Deadline.Sub(a.deps.now()), 0)
	w.stop = a.deps.clock().AfterFunc(d, func() { root.Send(self, &approvalExpired{id: id}) })
}

// onAsk answers a ToolRun that wants to run a command: allowed at once by a stored prefix
// (unless prefixes is false), joined to its stored request when resumed, or stored and sent
// to the owner.
func (a *Approvals) onAsk(ctx actor.Context, msg *approvalAsk, prefixes bool) {
	if msg.resumed {
		a.onResumedAsk(ctx, msg)
		return
	}
	if a.deps.Cluster != nil && prefixes {
		a.readPrefixes(ctx, msg) // another node may have added or revoked one; then askNow
		return
	}
	a.askNow(ctx, msg, prefixes)
}

// askNow is onAsk for a new request, with the prefixes as this Approvals holds them.
func (a *Approvals) askNow(ctx actor.Context, msg *approvalAsk, prefixes bool) {
	now := a.deps.now()
	req := msg.req
	req.Created, req.Deadline = now, now.Add(a.deps.approvalSettings().timeout())
	req.Prefix, _ = access.Prefix(req.Command)
	if prefix, ok := access.MatchPrefix(req.Command, a.prefixes); ok && prefixes {
		req.ID = access.NewExecRequestID(func(string) bool { return false })
		d := access.ExecDecision{ExecRequest: req, Decision: access.DecisionPrefix, By: "prefix: " + prefix, At: now}
		self, root, ask := ctx.Self(), ctx.ActorSystem().Root, *msg
		ctx.Send(a.storage, &storeWrite{Apply: func(tx persistence.Tx) error { return access.AuditExec(tx, d) },
			Done: func(err error) { root.Send(self, &prefixAudited{ask: ask, d: d, err: err}) }})
		return
	}
	req.ID = access.NewExecRequestID(func(id string) bool { return a.waits[id] != nil })
	w := &approvalWait{req: req, waiter: msg.waiter}
	a.waits[req.ID] = w
	ctx.Watch(msg.waiter)
	a.store(ctx, w, true)
}

// onResumedAsk joins a resumed call to its stored request, or gives it the decision made
// while it was not waiting; a call whose request is gone was not decided for it: withdrawn.
func (a *Approvals) onResumedAsk(ctx actor.Context, msg *approvalAsk) {
	key := msg.req.SessionKey + "\n" + msg.req.CallID
	if d, ok := a.settled[key]; ok {
		delete(a.settled, key)
		ctx.Send(msg.waiter, &approvalDecided{d: d})
		return
	}
	for _, w := range a.waits {
		if w.req.SessionKey == msg.req.SessionKey && w.req.CallID == msg.req.CallID {
			w.waiter = msg.waiter // a decision being written (its timeout, at start) reaches it
			ctx.Watch(msg.waiter)
			if !w.deciding {
				a.store(ctx, w, false) // asks the owner again: the first request may be long gone from view
			}
			return
		}
	}
	if a.deps.Cluster != nil {
		a.readResumed(ctx, msg) // asked, or decided, on another node
		return
	}
	ctx.Send(msg.waiter, &approvalDecided{d: access.ExecDecision{ExecRequest: msg.req, Decision: access.DecisionWithdrawn,
		By: "reef", At: a.deps.now()}})
}

func (a *Approvals) onPrefixAudited(ctx actor.Context, msg *prefixAudited) {
	if msg.err != nil {
		a.log.Error().Err(msg.err).Msg("could not audit a command allowed by prefix; asking the owner instead")
		ask := msg.ask
		a.onAsk(ctx, &ask, false) // not run unaudited
		return
	}
	a.logDecision(msg.d)
	ctx.Send(msg.ask.waiter, &approvalDecided{d: msg.d})
}

// onDecide decides a request for the owner.
func (a *Approvals) onDecide(ctx actor.Context, msg *approvalDecide) {
	id := access.NormalizeID(msg.id)
	if a.deps.Cluster != nil {
		a.decideShared(ctx, id, msg.decision, msg.by, msg) // it may wait on another node
		return
	}
	if w := a.waits[id]; w == nil || !w.stored || w.deciding {
		a.answer(ctx, msg.in, msg.replyTo, msg.reply, "", access.ErrNoExecRequest)
		return
	}
	a.decide(ctx, id, msg.decision, msg.by, msg)
}

// decide writes a decision: the request removed, the audit record, a prefix for always.
func (a *Approvals) decide(ctx actor.Context, id, decision, by string, cmd *approvalDecide) {
	if a.deps.Cluster != nil {
		a.decideShared(ctx, id, decision, by, cmd)
		return
	}
	w := a.waits[id]
	if w == nil || !w.stored || w.deciding {
		return
	}
	w.deciding = true
	at := a.deps.now()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	var d access.ExecDecision // set by Apply, read by Done: both run on the commit goroutine, in order
	ctx.Send(a.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			var err error
			d, err = access.DecideExec(tx, id, decision, by, at)
			return err
		},
		Done: func(err error) { root.Send(self, &approvalWritten{id: id, cmd: cmd, d: d, err: err}) },
	})
}

// onWritten acts on a decision once it is durable: the waiter runs the command or gets an
// error result; a decision nobody waits for is kept for a resumed call.
func (a *Approvals) onWritten(ctx actor.Context, msg *approvalWritten) {
	if a.deps.Cluster != nil {
		a.onWrittenShared(ctx, msg)
		return
	}
	w := a.waits[msg.id]
	if w == nil {
		return
	}
	if msg.err != nil {
		w.deciding = false
		a.log.Error().Err(msg.err).Str("approval", msg.id).Msg("could not record an approval decision")
		if msg.cmd != nil {
			a.answer(ctx, msg.cmd.in, msg.cmd.replyTo, msg.cmd.reply, "", errors.New("could not save the decision (storage error); try again"))
		}
		return
	}
	if w.stop != nil {
		w.stop()
	}
	delete(a.waits, msg.id)
	d := msg.d
	if d.Decision == access.DecisionAlways {
		a.prefixes = append(a.prefixes, access.ExecPrefix{Prefix: d.Prefix, By: d.By, Added: d.At, FromID: d.ID})
	}
	a.logDecision(d)
	if w.waiter != nil {
		ctx.Send(w.waiter, &approvalDecided{d: d})
		ctx.Unwatch(w.waiter)
	} else if d.Decision != access.DecisionWithdrawn {
		a.settled[d.SessionKey+"\n"+d.CallID] = d
	}
	if msg.cmd != nil {
		a.answer(ctx, msg.cmd.in, msg.cmd.replyTo, msg.cmd.reply, decisionText(d, w.waiter != nil), nil)
	}
}

// onWaiterGone forgets a ToolRun that stopped (its run was stopped, or reef is shutting down).
func (a *Approvals) onWaiterGone(who *actor.PID) {
	for id, w := range a.waits {
		if w.waiter != nil && w.waiter.Id == who.Id {
			w.waiter = nil
			if w.decided { // cluster mode: nobody is left to hand the decision to
				delete(a.waits, id)
			}
		}
	}
}

func (a *Approvals) onRevoke(ctx actor.Context, msg *approvalRevoke) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	ctx.Send(a.storage, &storeWrite{Apply: func(tx persistence.Tx) error { return access.RevokeExecPrefix(tx, msg.prefix) },
		Done: func(err error) { root.Send(self, &prefixRevoked{msg: msg, err: err}) }})
}

func (a *Approvals) onRevoked(ctx actor.Context, msg *prefixRevoked) {
	m := msg.msg
	if msg.err != nil {
		a.answer(ctx, m.in, m.replyTo, m.reply, "", msg.err)
		return
	}
	a.prefixes = slices.DeleteFunc(a.prefixes, func(p access.ExecPrefix) bool { return p.Prefix == normalizePrefix(m.prefix) })
	a.log.Info().Str("prefix", normalizePrefix(m.prefix)).Str("by", m.in.Channel+":"+m.in.SenderID).Msg("exec approval prefix revoked")
	a.answer(ctx, m.in, m.replyTo, m.reply, fmt.Sprintf("Revoked: `%s` asks again from now on.", normalizePrefix(m.prefix)), nil)
}

// answer replies to a command's sender.
func (a *Approvals) answer(ctx actor.Context, in messages.Inbound, to *actor.PID, reply chan<- approvalAnswer, text string, err error) {
	ans := approvalAnswer{in: in, text: text, err: err}
	if err != nil {
		ans.text = err.Error()
	}
	if reply != nil {
		reply <- ans
	}
	if to != nil {
		ctx.Send(to, &ans)
	}
}

// logDecision is the audit's log line.
func (a *Approvals) logDecision(d access.ExecDecision) {
	a.log.Info().Str("approval", d.ID).Str("decision", d.Decision).Str("by", d.By).Time("at", d.At).
		Str("command", d.Command).Str("cwd", orWorkspace(d.Workdir)).Str("asker", d.Asker()).
		Str("session", d.SessionKey).Msg("exec approval")
}
