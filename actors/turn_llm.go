package actors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// startLLM streams the next model answer in a goroutine the Turn owns; the answer comes back
// as llmDone tagged with the step, so a late answer after a cancel is dropped.
func (t *Turn) startLLM(ctx actor.Context) {
	t.step++
	step, in, runCtx, log := t.step, t.in, t.runCtx, t.log
	msgs, limit := t.requestMessages(), t.requestLimit()
	self, root := ctx.Self(), ctx.ActorSystem().Root
	text := t.textStream(ctx)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				log.Error().Str("session", in.sessionKey).Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("llm call panicked")
				root.Send(self, &llmDone{step: step, err: fmt.Errorf("llm call panicked: %v", r)})
			}
		}()
		done := callLLM(runCtx, in, msgs, step, limit, text.write)
		text.end()
		root.Send(self, done)
	}()
}

// sysPrompt is the system prompt and tool specs of a run's requests, with their estimated
// tokens (fixed: what every request of the run carries besides the transcript).
type sysPrompt struct {
	stable string // the agent's cached prefix, which providers may cache too
	tail   string // this run's lines; the prompt is stable+tail, never joined here
	specs  []messages.ToolSpec
	fixed  int
}

// requestPrompt builds the system prompt (from the workspace) and the tool specs of a run's
// requests. The stable prefix comes from the agent's cache.
func requestPrompt(in *turnInput) sysPrompt {
	a := in.agent
	specs, specTokens := a.toolSpecs(in.tools), a.toolSpecTokens(in.tools)
	prefix, prefixTokens := a.stablePrompt(in.chatType, in.reach.Owner, in.tools, in.deps.redactor())
	tail := agent.VolatilePrompt(agent.PromptInput{
		AgentID: a.ID, Model: in.model.Label, SessionKey: in.sessionKey,
		Channel: in.channel, ChatType: in.chatType,
		Now: in.deps.now(), Location: a.Location, Host: hostLine,
	})
	return sysPrompt{stable: prefix, tail: tail, specs: specs,
		fixed: prefixTokens + agent.EstimateTokens(tail) + specTokens}
}

// callLLM builds the request (system prompt from the workspace, transcript, allowed tools),
// streams the answer and collects it into one assistant message, passing its text to onText
// as it arrives. With limit > 0, a request estimated over limit tokens is not sent: the Turn
// compacts first.
func callLLM(ctx context.Context, in *turnInput, msgs []messages.ChatMessage, step, limit int, onText func(string)) *llmDone {
	sp := requestPrompt(in)
	fixed := sp.fixed
	if limit > 0 && fixed+agent.EstimateMessages(msgs) > limit {
		return &llmDone{step: step, overBudget: true, fixed: fixed}
	}
	msgs = mediaEntries(in, msgs) // images as image input (turn_media.go)
	lim := in.agent.Limits.withDefaults()
	callCtx, cancel := context.WithTimeout(ctx, lim.StreamTimeout)
	defer cancel()
	_, model, _ := strings.Cut(in.model.Label, "/")
	stream, err := in.model.Provider.Stream(callCtx, providers.Request{
		Model: model, System: sp.stable, SystemStable: len(sp.stable), SystemTail: sp.tail, Messages: msgs, Tools: append(sp.specs[:len(sp.specs):len(sp.specs)], clientSpecs(in)...),
		MaxTokens: in.model.MaxTokens, Reasoning: in.reasoning,
	})
	if err != nil {
		return &llmDone{step: step, err: streamErr(ctx, callCtx, err, lim.StreamTimeout)}
	}
	defer stream.Close()
	var text, reasoning strings.Builder
	done := &llmDone{step: step, fixed: fixed}
	chars := 0 // of the answer so far: text, reasoning and tool-call arguments
	for chars <= lim.MaxAnswerChars {
		ev, err := stream.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			done.err = streamErr(ctx, callCtx, err, lim.StreamTimeout)
			return done
		}
		switch ev.Kind {
		case providers.EventText:
			text.WriteString(ev.Text)
			onText(ev.Text)
			chars += utf8.RuneCountInString(ev.Text)
		case providers.EventReasoning:
			reasoning.WriteString(ev.Text)
			chars += utf8.RuneCountInString(ev.Text)
		case providers.EventToolCall:
			done.msg.ToolCalls = append(done.msg.ToolCalls, ev.ToolCall)
			chars += utf8.RuneCountInString(ev.ToolCall.Arguments)
		case providers.EventUsage:
			done.usage = ev.Usage
		}
	}
	done.msg.Role = messages.RoleAssistant
	done.msg.Content = text.String()
	done.msg.Reasoning = reasoning.String()
	if chars > lim.MaxAnswerChars {
		cutAnswer(&done.msg, lim.MaxAnswerChars)
	}
	done.msg.Time = in.deps.now()
	return done
}

// errStreamTimeout is a model call that streamed for longer than Limits.StreamTimeout.
var errStreamTimeout = errors.New("model call timed out")

// streamErr names a call cut by the stream timeout (rather than by the run's own context).
func streamErr(runCtx, callCtx context.Context, err error, limit time.Duration) error {
	if runCtx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: the answer streamed for longer than %s (llm.streamTimeoutSeconds)", errStreamTimeout, limit)
	}
	return err
}

// cutAnswer keeps at most limit characters of an answer that went past it, text first, says so
// in its text, and drops its tool calls: a cut answer is not acted on.
func cutAnswer(m *messages.ChatMessage, limit int) {
	m.Content = runePrefix(m.Content, limit)
	m.Reasoning = runePrefix(m.Reasoning, max(0, limit-utf8.RuneCountInString(m.Content)))
	dropped := ""
	if n := len(m.ToolCalls); n > 0 {
		dropped = fmt.Sprintf("; its %d tool call(s) were not run", n)
		m.ToolCalls = nil
	}
	m.Content += fmt.Sprintf("\n\n[reef: this answer was cut at %d characters (llm.maxAnswerChars)%s]", limit, dropped)
}

// runePrefix returns the first n characters of s.
func runePrefix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func (t *Turn) onLLMDone(ctx actor.Context, msg *llmDone) {
	if msg.step != t.step || t.done {
		return
	}
	t.usage = t.usage.Add(msg.usage)
	if t.onContextSignal(ctx, msg) {
		return
	}
	if msg.err != nil {
		t.finish(ctx, "", msg.err)
		return
	}
	m := msg.msg
	red := t.in.deps.redactor()
	m.Content, m.Reasoning = red.apply(m.Content), red.apply(m.Reasoning)
	m.ToolCalls = red.toolCalls(m.ToolCalls) // before the tool, the transcript and the next request see them
	if t.flushStep(ctx, m) {
		return
	}
	shown := t.shownText(ctx, m.Content) // the transcript keeps the answer as written
	if len(m.ToolCalls) == 0 {
		if t.nudgeClient(ctx, m) { // the caller requires a call of its tool (turn_client.go)
			return
		}
		t.msgs = append(t.msgs, m)
		t.finish(ctx, shown, nil)
		return
	}
	t.callText = shown
	m.ToolCalls = t.uniqueIDs(m.ToolCalls)
	t.msgs = append(t.msgs, m)
	if shown := agent.ShownText(shown); shown != "" && !t.cmp.flushing { // directives stripped too
		ctx.Send(ctx.Parent(), &messages.TurnEvent{SessionKey: t.in.sessionKey, Kind: messages.TextDelta, Text: shown})
	}
	if len(t.steer) > 0 && !t.cmp.flushing { // the user spoke while the model wrote these calls: ask it again first
		for _, c := range m.ToolCalls {
			t.msgs = append(t.msgs, toolResult(c, "skipped: a new user message arrived", true))
			t.event(ctx, messages.ToolFinished, c.ID, c.Name+": skipped", true)
		}
		t.injectSteered()
		t.startLLM(ctx)
		return
	}
	t.dispatch(ctx, m.ToolCalls)
}

// uniqueIDs gives every call an id unique within the run (some servers send none or repeat them).
func (t *Turn) uniqueIDs(calls []messages.ToolCall) []messages.ToolCall {
	out := make([]messages.ToolCall, len(calls))
	seen := map[string]bool{}
	for _, m := range t.msgs {
		for _, c := range m.ToolCalls {
			seen[c.ID] = true
		}
	}
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] {
			c.ID = fmt.Sprintf("call_%d_%d", t.step, i+1)
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}
