package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/tools"
)

// approvalGate is what a ToolRun needs to ask the owner before its call runs.
type approvalGate struct {
	ask       approvalAsk // waiter set by the ToolRun
	approvals *actor.PID
	timeout   time.Duration // the request's timeout, for the backstop and the model's note
}

// approvalBackstop is added to the request's timeout before a ToolRun stops waiting on its
// own, should Approvals never answer (it restarted and lost track of the waiter).
const approvalBackstop = time.Minute

// The Turn's messages about a call that waits for the owner.
type (
	approvalWaiting struct {
		step    int
		callID  string
		req     access.ExecRequest
		reached string
	}
	approvalEnded struct {
		step   int
		callID string
		id     string
	}
)

// ask sends the call's request to Approvals and waits, without a tool deadline running.
func (r *ToolRun) ask(ctx actor.Context) {
	ask := r.gate.ask
	ask.waiter = ctx.Self()
	ctx.Send(r.gate.approvals, &ask)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	req := ask.req
	r.timer = time.AfterFunc(r.gate.timeout+approvalBackstop, func() {
		root.Send(self, &approvalDecided{d: access.ExecDecision{ExecRequest: req, Decision: access.DecisionTimeout, By: "reef"}})
	})
}

func (r *ToolRun) onApprovalPending(ctx actor.Context, msg *approvalPending) {
	if r.gate == nil {
		return
	}
	r.gate.ask.req.ID = msg.req.ID
	ctx.Send(ctx.Parent(), &approvalWaiting{step: r.step, callID: r.call.ID, req: msg.req, reached: msg.reached})
}

// onApprovalDecided runs the call when the owner approved it, and reports an error result
// (reef's note, not the tool's output) when not.
func (r *ToolRun) onApprovalDecided(ctx actor.Context, msg *approvalDecided) {
	if r.gate == nil {
		return
	}
	gate := r.gate
	r.gate = nil
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	ctx.Send(ctx.Parent(), &approvalEnded{step: r.step, callID: r.call.ID, id: gate.ask.req.ID})
	if !msg.d.Allowed() {
		r.report(ctx, tools.Result{IsError: true, Content: deniedResult(msg.d, gate.timeout)}, false)
		return
	}
	r.start(ctx)
}
