package actors

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// ToolRun runs one tool call. The tool body runs in a goroutine the ToolRun owns (Sync tools
// run inline), under a deadline; a panic becomes an error result, and a tool that ignores
// cancellation is abandoned after a grace period. Either way the Turn gets one result.
type ToolRun struct {
	step    int
	call    messages.ToolCall
	tool    tools.Tool
	env     tools.Env
	timeout time.Duration
	log     zerolog.Logger

	cancel   context.CancelFunc
	timer    *time.Timer
	reported bool
	gate     *approvalGate // the owner must approve the call first (toolrun_approval.go); nil: no
}

// toolOutput is the ToolRun's self-message with the tool's result. outside is set when the
// content came from the tool (its output or its error), not from reef (a timeout, a crash).
type toolOutput struct {
	result  tools.Result
	outside bool
}

// ToolRunProps is the recipe for the ToolRun of one call.
// With gate set, the call waits for the owner's approval before it runs.
func ToolRunProps(step int, call messages.ToolCall, tool tools.Tool, env tools.Env, timeout time.Duration, gate *approvalGate, log zerolog.Logger) *actor.Props {
	log = log.With().Str("tool", call.Name).Str("call", call.ID).Logger()
	return actor.PropsFromProducer(func() actor.Actor {
		return &ToolRun{step: step, call: call, tool: tool, env: env, timeout: timeout, gate: gate, log: log}
	}, actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(log)))
}

func (r *ToolRun) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		r.onStarted(ctx)
	case *approvalPending:
		r.onApprovalPending(ctx, msg)
	case *approvalDecided:
		r.onApprovalDecided(ctx, msg)
	case *toolOutput:
		r.report(ctx, msg.result, msg.outside)
	case *actor.Stopping:
		if r.cancel != nil {
			r.cancel()
		}
		if r.timer != nil {
			r.timer.Stop()
		}
	}
}

func (r *ToolRun) onStarted(ctx actor.Context) {
	if r.gate != nil {
		r.ask(ctx)
		return
	}
	r.start(ctx)
}

// start runs the tool.
func (r *ToolRun) start(ctx actor.Context) {
	call := tools.Call{ID: r.call.ID, Args: []byte(r.call.Arguments), Env: r.env}
	if _, ok := r.tool.(tools.Sync); ok {
		res, outside := runTool(context.Background(), r.tool, call, r.timeout)
		r.report(ctx, res, outside)
		return
	}
	runCtx, cancel := context.WithTimeout(context.Background(), r.timeout)
	r.cancel = cancel
	self, root := ctx.Self(), ctx.ActorSystem().Root
	grace := min(2*time.Second, r.timeout/4)
	r.timer = time.AfterFunc(r.timeout+grace, func() {
		root.Send(self, &toolOutput{result: tools.Result{IsError: true,
			Content: fmt.Sprintf("the tool did not finish within %s and was abandoned", r.timeout)}})
	})
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.log.Error().Str("panic", fmt.Sprint(p)).Str("stack", string(debug.Stack())).Msg("tool panicked")
				root.Send(self, &toolOutput{result: tools.Result{IsError: true, Content: fmt.Sprintf("the tool crashed: %v", p)}})
			}
		}()
		res, outside := runTool(runCtx, r.tool, call, r.timeout)
		root.Send(self, &toolOutput{result: res, outside: outside})
	}()
}

// runTool runs the tool and turns an error into an error result. outside reports whether the
// content is the tool's (false for reef's own timeout note).
func runTool(ctx context.Context, tool tools.Tool, call tools.Call, timeout time.Duration) (res tools.Result, outside bool) {
	res, err := tool.Run(ctx, call)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tools.Result{IsError: true, Content: fmt.Sprintf("the tool timed out after %s", timeout)}, false
	case err != nil:
		return tools.Result{IsError: true, Content: err.Error()}, true
	}
	return res, true
}

func (r *ToolRun) report(ctx actor.Context, res tools.Result, outside bool) {
	if r.reported {
		return
	}
	r.reported = true
	ctx.Send(ctx.Parent(), &toolDone{step: r.step, callID: r.call.ID,
		result: toolResult(r.call, res.Content, res.IsError), outside: outside, plan: res.Plan})
	ctx.Stop(ctx.Self())
}
