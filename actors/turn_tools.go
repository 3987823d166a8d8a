package actors

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
)

// readOnlyTools change no workspace file, so they leave the cached workspace valid.
var readOnlyTools = map[string]bool{"read": true, "ls": true, "web_fetch": true, "web_search": true}

// runRef is what a Turn remembers of a ToolRun it spawned.
type runRef struct {
	callID string
	step   int
}

// toolLost is the Turn's self-message when a ToolRun stopped. It is queued behind any result
// the ToolRun sent before stopping (Terminated overtakes user messages), so a call is only
// declared crashed when no result is coming.
type toolLost struct {
	step   int
	callID string
}

// dispatch runs a step's calls, after recording them as started when a crash must not
// repeat them (turn_started.go).
func (t *Turn) dispatch(ctx actor.Context, calls []messages.ToolCall) {
	t.pending = calls
	clear(t.results)
	clear(t.outside)
	clear(t.started)
	if t.mustRecord(calls) {
		t.recordStarted(ctx)
		return
	}
	t.runCalls(ctx)
}

// runCalls checks each pending call without a result and spawns a ToolRun for the valid ones;
// the others get an error result at once, with no side effect.
func (t *Turn) runCalls(ctx actor.Context) {
	for _, c := range t.pending {
		if t.results[c.ID] != nil || t.started[c.ID] {
			continue
		}
		if c.Name == subagent.ToolYield && t.othersRunning(c.ID) {
			continue // after the step's other calls: a sessions_spawn beside it must count first
		}
		if t.in.clientTool(c.Name) { // the caller runs it (turn_client.go)
			t.holdClient(ctx, c)
			continue
		}
		t.started[c.ID] = true
		if res, ok := t.precheck(c); !ok {
			t.results[c.ID] = &res
			t.event(ctx, messages.ToolFinished, c.ID, c.Name+": "+res.Content, true)
			t.toolEnded(c, false)
			continue
		}
		tool, _ := t.in.agent.Tools.Get(c.Name)
		pid := ctx.Spawn(ToolRunProps(t.step, c, tool, tools.Env{
			Workspace: t.in.agent.Workspace, AgentID: t.in.agent.ID, SessionKey: t.in.sessionKey,
			Channel: t.in.channel, SenderID: t.in.senderID, Runtime: t.in.deps.toolRuntime, Tools: t.in.tools.Allowed(),
			Reach: tools.Reach{Owner: t.in.reach.Owner, Uploads: append(slices.Clone(t.in.reach.Uploads), uploadsOf(t.in.user)...)},
		}, t.limits.ToolTimeout, t.gate(c), t.log))
		t.runs[pid.Id] = runRef{callID: c.ID, step: t.step}
		t.event(ctx, messages.ToolStarted, c.ID, toolLabel(c), false)
		t.toolStarted(c)
	}
	t.maybeNextStep(ctx)
}

// othersRunning reports whether a call of the step other than id and not a sessions_yield
// has no result yet.
func (t *Turn) othersRunning(id string) bool {
	for _, c := range t.pending {
		if c.ID != id && c.Name != subagent.ToolYield && !t.in.clientTool(c.Name) && t.results[c.ID] == nil {
			return true
		}
	}
	return false
}

// precheck refuses calls over the tool-call limit, to unknown or denied tools, or with arguments that
// are not JSON. A tool the agent has but this run's caller may not use (a guest asking for exec)
// gets a refusal that says who may; it was never offered, so the model made the name up.
func (t *Turn) precheck(c messages.ToolCall) (messages.ChatMessage, bool) {
	a := t.in.agent
	t.toolCount++
	if t.toolCount > t.limits.MaxToolCalls {
		t.stopErr = fmt.Errorf("%w: %d tool calls in one run", errToolLimit, t.limits.MaxToolCalls)
		return toolResult(c, fmt.Sprintf("not run: this run reached its limit of %d tool calls", t.limits.MaxToolCalls), true), false
	}
	if _, ok := a.Tools.Get(c.Name); ok && a.Policy.Allows(c.Name) && !t.in.tools.Allows(c.Name) {
		return toolResult(c, tools.Refusal(c.Name, t.in.channel, t.in.senderID), true), false
	}
	if _, ok := a.Tools.Get(c.Name); !ok || !t.in.tools.Allows(c.Name) {
		specs := a.toolSpecs(t.in.tools)
		names := make([]string, 0, len(specs))
		for _, s := range specs {
			names = append(names, s.Name)
		}
		msg := fmt.Sprintf("unknown tool %q", c.Name)
		if ok { // the agent's tool policy denies it: never offered, e.g. an MCP tool added while reef runs
			msg = fmt.Sprintf("tool %q is not allowed for this agent (reef.yaml: agents[].tools allow/deny); it was not run", c.Name)
		}
		return toolResult(c, fmt.Sprintf("%s; available tools: %s", msg, strings.Join(names, ", ")), true), false
	}
	if args := strings.TrimSpace(c.Arguments); args != "" && !json.Valid([]byte(args)) {
		return toolResult(c, "arguments are not valid JSON; send a JSON object matching the tool's parameters", true), false
	}
	return messages.ChatMessage{}, true
}

func (t *Turn) onToolDone(ctx actor.Context, msg *toolDone) {
	if msg.step != t.step || t.done || t.results[msg.callID] != nil {
		return
	}
	r := msg.result
	t.results[msg.callID] = &r
	t.outside[msg.callID] = msg.outside
	if !r.IsError && !readOnlyTools[r.ToolName] {
		t.in.agent.forgetWorkspace() // the tool may have changed files the prompt injects
	}
	t.event(ctx, messages.ToolFinished, msg.callID, "", r.IsError)
	t.publishToolDone(ctx, t.callByID(msg.callID), msg)
	t.maybeNextStep(ctx)
}

func (t *Turn) onToolRunTerminated(ctx actor.Context, msg *actor.Terminated) {
	ref, ok := t.runs[msg.Who.Id]
	if !ok {
		return
	}
	delete(t.runs, msg.Who.Id)
	ctx.Send(ctx.Self(), &toolLost{step: ref.step, callID: ref.callID}) // the call's step, not the current one
}

func (t *Turn) onToolLost(ctx actor.Context, msg *toolLost) {
	if msg.step != t.step || t.done || t.results[msg.callID] != nil {
		return
	}
	for _, c := range t.pending {
		if c.ID == msg.callID {
			r := toolResult(c, "the tool crashed; this call failed and had no effect that reef knows of", true)
			t.results[c.ID] = &r
			t.event(ctx, messages.ToolFinished, c.ID, "", true)
			t.toolEnded(c, false)
			t.maybeNextStep(ctx)
		}
	}
}

// maybeNextStep continues once every call of the step has its result (and only then: with no
// calls pending, the step has already moved on).
func (t *Turn) maybeNextStep(ctx actor.Context) {
	if len(t.pending) == 0 {
		return
	}
	held := false
	var parked []messages.ToolCall // client calls: the caller runs them (turn_client.go)
	for _, c := range t.pending {
		if t.results[c.ID] == nil {
			if t.started[c.ID] && t.in.clientTool(c.Name) {
				parked = append(parked, c)
				continue
			}
			if t.started[c.ID] {
				return
			}
			held = true
		}
	}
	if held { // only a held sessions_yield is left: run it now
		t.runCalls(ctx)
		return
	}
	if len(parked) > 0 {
		t.park(ctx, parked)
		return
	}
	yielded := t.yielded()
	t.appendResults()
	if t.stopErr != nil {
		t.finish(ctx, "", t.stopErr)
		return
	}
	if yielded { // sessions_yield: the run ends here, silently; a completion starts the next
		t.finish(ctx, "", nil)
		return
	}
	t.injectSteered()
	t.startLLM(ctx)
}

// injectSteered appends the messages the user sent during the run as user entries, so the
// next model call sees them.
func (t *Turn) injectSteered() {
	if t.cmp.flushing {
		return // not into the memory flush: its entries are dropped; after the compaction
	}
	for _, in := range t.steer {
		t.msgs = append(t.msgs, userEntry(in, t.in.deps.redactor()))
	}
	t.injected = append(t.injected, t.steer...)
	if len(t.steer) > 0 {
		clear(t.repeats) // the user said something new: the same call may now mean something else
	}
	t.steer = nil
}

// appendResults records the step's results in call order: redacted, truncated to the model's
// window, and a tool's own output wrapped as untrusted data (the model is told to treat it as
// data, never as instructions; a forged end marker inside is neutralised). Reef's own notes
// (refusals, timeouts, the loop warning) stay outside the markers.
func (t *Turn) appendResults() {
	for _, c := range t.pending {
		if t.results[c.ID] == nil {
			continue // a client call the run parks with (turn_client.go)
		}
		r := *t.results[c.ID]
		r.Content = agent.TruncateToolResult(t.in.deps.redactor().apply(r.Content), t.in.model.ContextWindow)
		note := t.watchLoop(c, r) // on the unwrapped content: the markers' ids differ every time
		if t.outside[c.ID] {
			r.Content = agent.WrapUntrusted("tool:"+c.Name, r.Content)
		}
		r.Content += note
		r.Time = t.in.deps.now()
		t.msgs = append(t.msgs, r)
	}
	t.pending = nil
}

func toolResult(c messages.ToolCall, content string, isErr bool) messages.ChatMessage {
	return messages.ChatMessage{Role: messages.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: content, IsError: isErr}
}

func compactJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// toolLabel is a short line describing a call, for progress displays (agent.ToolLabel).
func toolLabel(c messages.ToolCall) string { return agent.ToolLabel(c.Name, c.Arguments) }
