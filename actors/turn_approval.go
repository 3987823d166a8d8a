package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
)

// A call that must be approved (Deps.Approvals) waits in its ToolRun; the Turn keeps serving
// its messages meanwhile. While any call waits, the run's own timeout is paused: the owner's
// answer is bounded by the approval timeout, and the command gets its full run time after.
// The Session shows the wait in the chat and in /status (approvalNotice). A run that ends
// while calls wait withdraws their requests.

// approvalNotice tells the Session a call of its run started or stopped waiting.
type approvalNotice struct {
	req     access.ExecRequest
	reached string
	done    bool
}

// gate returns what the ToolRun of c needs to ask the owner first, or nil when c runs at once.
func (t *Turn) gate(c messages.ToolCall) *approvalGate {
	deps := t.in.deps
	if c.Name != "exec" || deps.approvals == nil || !deps.approvalSettings().asks(t.in.owner) {
		return nil
	}
	command, workdir, ok := access.Describe(c.Arguments)
	if !ok {
		return nil // exec refuses it without running anything
	}
	red := deps.redactor()
	req := access.ExecRequest{SessionKey: t.in.sessionKey, CallID: c.ID, Command: red.apply(command), Workdir: red.apply(workdir),
		Channel: t.in.channel, ChatID: t.in.chatID, ChatType: t.in.chatType, SenderID: t.in.senderID, SenderName: t.in.senderName}
	return &approvalGate{ask: approvalAsk{req: req, resumed: t.resumedCalls[c.ID]}, approvals: deps.approvals,
		timeout: deps.approvalSettings().timeout()}
}

func (t *Turn) onApprovalWaiting(ctx actor.Context, msg *approvalWaiting) {
	if msg.step != t.step || t.done {
		return
	}
	if t.awaiting == nil {
		t.awaiting = map[string]string{}
	}
	if len(t.awaiting) == 0 && t.timer != nil {
		t.timer.Stop()
		t.timeLeft = time.Until(t.deadline)
	}
	t.awaiting[msg.callID] = msg.req.ID
	t.publish(messages.RunEvent{Kind: messages.ApprovalWait, ID: msg.callID, Name: "exec", Summary: capLine(msg.req.Command, maxSummary)})
	ctx.Send(ctx.Parent(), &approvalNotice{req: msg.req, reached: msg.reached})
}

func (t *Turn) onApprovalEnded(ctx actor.Context, msg *approvalEnded) {
	if _, ok := t.awaiting[msg.callID]; !ok || msg.step != t.step || t.done {
		return
	}
	delete(t.awaiting, msg.callID)
	if len(t.awaiting) == 0 {
		t.armTimeout(ctx, max(t.timeLeft, 0))
	}
	ctx.Send(ctx.Parent(), &approvalNotice{req: access.ExecRequest{ID: msg.id, CallID: msg.callID}, done: true})
}

// armTimeout (re)starts the run's timeout.
func (t *Turn) armTimeout(ctx actor.Context, d time.Duration) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	t.deadline = time.Now().Add(d)
	t.timer = time.AfterFunc(d, func() { root.Send(self, &turnTimeout{}) })
}

// withdrawApprovals ends the requests of calls still waiting when the run ends.
func (t *Turn) withdrawApprovals(ctx actor.Context) {
	for callID, id := range t.awaiting {
		ctx.Send(t.in.deps.approvals, &approvalWithdraw{id: id})
		ctx.Send(ctx.Parent(), &approvalNotice{req: access.ExecRequest{ID: id, CallID: callID}, done: true})
	}
	t.awaiting = nil
}
