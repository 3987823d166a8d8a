package actors

import (
	"encoding/json"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
)

// Client tools (messages.ClientTools) are tools the caller runs itself: the OpenAI-compatible
// API's request tools. The model is offered them beside the agent's own. A call of one is not
// run here: once the step's other calls have their results, the run ends with it ("parks").
// Its record keeps the call without a result, its TurnFinal carries the call to the caller
// (TurnEvent.ClientCalls), and the caller's next message brings the result
// (Inbound.ToolResults), which the next run starts from (session_client.go). Parking in the
// transcript rather than in a live Turn lets the caller take its time, holds no run open
// meanwhile, and survives a restart or a passivation.

// clientSpecs are the client tools the run offers the model: none with tool_choice "none",
// only the named one with a named tool_choice, never one named like a tool of the agent's
// (the agent's own wins; the API refuses such a request before).
func clientSpecs(in *turnInput) []messages.ToolSpec {
	ct := in.client
	if ct == nil || ct.Choice == "none" {
		return nil
	}
	var out []messages.ToolSpec
	for _, s := range ct.Specs {
		if in.agent.Tools != nil {
			if _, mine := in.agent.Tools.Get(s.Name); mine {
				continue
			}
		}
		if named := ct.Choice != "" && ct.Choice != "auto" && ct.Choice != "required"; named && s.Name != ct.Choice {
			continue
		}
		out = append(out, s)
	}
	return out
}

// clientTool reports whether name is a client tool the run offers.
func (in *turnInput) clientTool(name string) bool {
	for _, s := range clientSpecs(in) {
		if s.Name == name {
			return true
		}
	}
	return false
}

// holdClient takes a call of a client tool: it waits for the caller (true), or gets an error
// result at once: arguments that are not JSON, or a second call of the step when the caller
// takes one at a time (parallel_tool_calls: false).
func (t *Turn) holdClient(ctx actor.Context, c messages.ToolCall) bool {
	var reason string
	switch {
	case strings.TrimSpace(c.Arguments) != "" && !json.Valid([]byte(c.Arguments)):
		reason = "arguments are not valid JSON; send a JSON object matching the tool's parameters"
	case t.in.client.Serial && t.clientWaiting() > 0:
		reason = "not run: the caller takes one tool call at a time; call it again once the first call's result is in"
	}
	t.started[c.ID] = true
	if reason == "" {
		return true
	}
	r := toolResult(c, reason, true)
	t.results[c.ID] = &r
	t.event(ctx, messages.ToolFinished, c.ID, c.Name+": "+reason, true)
	return false
}

// clientWaiting counts the step's client calls waiting for the caller.
func (t *Turn) clientWaiting() int {
	n := 0
	for _, c := range t.pending {
		if t.started[c.ID] && t.results[c.ID] == nil && t.in.clientTool(c.Name) {
			n++
		}
	}
	return n
}

// park ends the run with the step's client calls waiting for the caller: the other calls'
// results are recorded, the client calls stay without one, and the run's reply is the text
// the model wrote with the calls.
func (t *Turn) park(ctx actor.Context, calls []messages.ToolCall) {
	if t.stopErr != nil { // a limit ends the run: every call gets its result (finish)
		t.finish(ctx, "", t.stopErr)
		return
	}
	t.appendResults()
	t.clientCalls = calls
	t.finish(ctx, t.callText, nil)
}

// nudgeClient asks the model again, once, when it answered without a call of a client tool
// although the caller requires one (tool_choice "required" or a named tool): the answer stays
// in the run, followed by a system note that asks for the call.
func (t *Turn) nudgeClient(ctx actor.Context, answer messages.ChatMessage) bool {
	ct := t.in.client
	if ct == nil || t.nudged || t.cmp.flushing || ct.Choice == "" || ct.Choice == "auto" || ct.Choice == "none" {
		return false
	}
	names := make([]string, 0, len(ct.Specs))
	for _, s := range clientSpecs(t.in) {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return false
	}
	t.nudged = true
	t.msgs = append(t.msgs, answer, messages.ChatMessage{Role: messages.RoleSystem, Time: t.in.deps.now(),
		Content: "The caller requires this answer to call one of its tools (" + strings.Join(names, ", ") + "). Call it now."})
	t.startLLM(ctx)
	return true
}
