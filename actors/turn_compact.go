package actors

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// Compaction is how an agent keeps its conversations inside the model's context window. Before
// each LLM call a Turn estimates the request; over window − reserve, the older messages are
// summarized by the agent's own model and the most recent ones are kept word for word.
type Compaction struct {
	ReserveTokens    int  // tokens kept free; 0 = agent.DefaultReserveTokens(window)
	KeepRecentTokens int  // recent tokens kept word for word; 0 = agent.DefaultKeepRecentTokens
	MemoryFlush      bool // before an automatic compaction, a silent step lets the agent write memory notes
}

// maxFlushSteps bounds the LLM calls of one memory flush.
const maxFlushSteps = 4

// window is the context window of the run's model in tokens (128000 when not set).
func (in *turnInput) window() int {
	if in.model.ContextWindow > 0 {
		return in.model.ContextWindow
	}
	return 128000
}

// budget is how a request of the run shares its model's window, with fixed tokens of system
// prompt and tool specs.
func (in *turnInput) budget(fixed int) agent.ContextBudget {
	w := in.window()
	r := in.agent.Compaction.ReserveTokens
	if r <= 0 || r > w/2 {
		r = agent.DefaultReserveTokens(w)
	}
	return agent.ContextBudget{Window: w, Reserve: r, Fixed: fixed}
}

// compactInput is what a Session tells its Turn about compaction.
type compactInput struct {
	hasSummary   bool   // history[0] is a compaction summary
	manual       bool   // /compact: only compact, then reply with one line
	instructions string // /compact's extra instructions for the summary
}

// turnCompact is a Turn's compaction state. The Turn's requests are the latest summary
// followed by (history + user + msgs)[covered:]; the run's own entries are never changed, so
// the Session stores them all and a snapshot says which of them the summary replaces.
type turnCompact struct {
	summary    string // the latest summary ("" = none)
	summaryAt  time.Time
	covered    int  // entries of history + user + msgs the summary stands for
	count      int  // entries this run's compactions summarized
	compacted  bool // this run made a new summary (the Session stores it)
	skipCheck  bool // the next LLM call skips the budget check (it follows a compaction)
	retried    bool // a context overflow was already answered with a compaction
	overflow   error
	flushed    bool // a memory flush ran since the last compaction
	flushing   bool
	flushBase  int // len(t.msgs) when the flush began; its entries are dropped after it
	flushSteps int
	fixed      int // tokens of the system prompt and tool specs, from the last request
}

// compactionReport tells the Session what a finished Turn did to the context.
type compactionReport struct {
	compacted bool
	summary   string
	summaryAt time.Time
	covered   int
	fixed     int
}

// Turn self-messages for compaction.
type (
	compactJob struct {
		step         int
		view         []messages.ChatMessage // the request's messages; view[0] is the summary when previous != ""
		previous     string
		keep         int // configured keepRecentTokens
		overflow     bool
		instructions string
	}
	compactDone struct {
		step    int
		start   int // 1 when view[0] was the previous summary
		cut     int // view[start:cut] was summarized
		summary string
		count   int
		fixed   int
		after   int // estimated tokens of the next request
		usage   messages.Usage
		err     error
	}
)

// requestMessages is what the next LLM call sends: the latest summary, then every entry the
// summary does not stand for.
func (t *Turn) requestMessages() []messages.ChatMessage {
	c, in := &t.cmp, t.in
	msgs := make([]messages.ChatMessage, 0, len(in.history)+len(in.user)+len(t.msgs)+1-c.covered)
	if c.summary != "" {
		msgs = append(msgs, agent.SummaryEntry(c.summary, c.summaryAt))
	}
	skip := c.covered
	for _, part := range [][]messages.ChatMessage{in.history, in.user, t.msgs} {
		if skip >= len(part) {
			skip -= len(part)
			continue
		}
		msgs = append(msgs, part[skip:]...)
		skip = 0
	}
	return msgs
}

// requestLimit is the most tokens the next request may hold before it is compacted; 0 means
// no check (during a memory flush, and right after a compaction, which must not loop).
func (t *Turn) requestLimit() int {
	c := &t.cmp
	if c.flushing || c.skipCheck {
		c.skipCheck = false
		return 0
	}
	return t.in.budget(0).Limit()
}

// onContextSignal handles an LLM call that did not happen because the request was over the
// budget, one that failed with a context overflow, and a failed memory-flush call. It reports
// whether it took over.
func (t *Turn) onContextSignal(ctx actor.Context, msg *llmDone) bool {
	c := &t.cmp
	if msg.fixed > 0 {
		c.fixed = msg.fixed
	}
	switch {
	case msg.overBudget:
		t.autoCompact(ctx, nil)
	case c.flushing && msg.err != nil:
		t.log.Warn().Err(msg.err).Str("session", t.in.sessionKey).Msg("memory flush failed; compacting without it")
		t.endFlush(ctx)
	case errors.Is(msg.err, providers.ErrContextOverflow) && !c.retried:
		c.retried = true
		t.autoCompact(ctx, msg.err)
	default:
		return false
	}
	return true
}

// autoCompact compacts before the next LLM call, after a memory flush when the agent may write
// files. overflow is the provider's overflow error, nil when the estimate asked for it.
func (t *Turn) autoCompact(ctx actor.Context, overflow error) {
	c := &t.cmp
	c.overflow = overflow
	if overflow == nil && !c.flushed && t.mayFlush() && t.canCompact() {
		c.flushed, c.flushing, c.flushBase, c.flushSteps = true, true, len(t.msgs), 0
		now := t.in.deps.now().In(t.in.agent.location())
		t.msgs = append(t.msgs, messages.ChatMessage{Role: messages.RoleSystem, Content: agent.MemoryFlushPrompt(now), Time: now})
		t.startLLM(ctx)
		return
	}
	t.startSummary(ctx, overflow != nil)
}

// mayFlush reports whether the agent may write notes before a compaction: the flush is on and
// the agent may use write or edit.
func (t *Turn) mayFlush() bool {
	if !t.in.agent.Compaction.MemoryFlush {
		return false
	}
	for _, s := range t.in.agent.toolSpecs(t.in.tools) {
		if s.Name == "write" || s.Name == "edit" {
			return true
		}
	}
	return false
}

// canCompact reports whether a compaction would summarize anything, as far as the last known
// size of the system prompt tells.
func (t *Turn) canCompact() bool {
	view := t.requestMessages()
	start := 0
	if t.cmp.summary != "" {
		start = 1
	}
	keep := t.in.budget(t.cmp.fixed).KeepRecent(t.in.agent.Compaction.KeepRecentTokens)
	return agent.PlanCut(view[start:], keep) > 0
}

// flushStep handles an answer during the memory flush: its tool calls run like any others (they
// are real workspace writes) until the model answers without calls or the flush ran out of
// steps; then the flush ends. It reports whether it took over.
func (t *Turn) flushStep(ctx actor.Context, m messages.ChatMessage) bool {
	c := &t.cmp
	if !c.flushing {
		return false
	}
	c.flushSteps++
	if len(m.ToolCalls) > 0 && c.flushSteps < maxFlushSteps {
		return false
	}
	if text := strings.TrimSpace(m.Content); text != "" && !agent.IsSilent(text) {
		t.log.Debug().Str("session", t.in.sessionKey).Int("chars", len(text)).Msg("memory flush answered with text; not delivered")
	}
	t.endFlush(ctx)
	return true
}

// endFlush drops the flush's entries (the notes are in the workspace; the transcript the model
// sees goes on as if the flush had not happened) and compacts.
func (t *Turn) endFlush(ctx actor.Context) {
	c := &t.cmp
	var tools []string
	for _, m := range t.msgs[c.flushBase:] {
		for _, call := range m.ToolCalls {
			tools = append(tools, toolLabel(call))
		}
	}
	t.log.Info().Str("session", t.in.sessionKey).Int("steps", c.flushSteps).Strs("tools", tools).Msg("memory flush before compaction")
	t.dropFlush()
	t.startSummary(ctx, false)
}

// dropFlush removes the memory flush's entries from the run, if one is under way.
func (t *Turn) dropFlush() {
	c := &t.cmp
	if !c.flushing {
		return
	}
	clear(t.msgs[c.flushBase:])
	t.msgs = t.msgs[:c.flushBase]
	c.flushing = false
}

// startSummary writes the summary in a goroutine the Turn owns; the result comes back as
// compactDone.
func (t *Turn) startSummary(ctx actor.Context, overflow bool) {
	job := &compactJob{step: t.step, view: t.requestMessages(), previous: t.cmp.summary,
		keep: t.in.agent.Compaction.KeepRecentTokens, overflow: overflow, instructions: t.in.compact.instructions}
	in, runCtx, log := t.in, t.runCtx, t.log
	self, root := ctx.Self(), ctx.ActorSystem().Root
	go func() {
		defer func() {
			if r := recover(); r != nil {
				log.Error().Str("session", in.sessionKey).Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("compaction panicked")
				root.Send(self, &compactDone{step: job.step, err: fmt.Errorf("compaction panicked: %v", r)})
			}
		}()
		root.Send(self, runCompaction(runCtx, in, job))
	}()
}

// onCompactDone takes the new summary and goes on: the manual command replies, a run makes its
// next LLM call. A compaction that failed or found nothing to summarize lets the run go on as
// it was, except after a context overflow, which then ends the run.
func (t *Turn) onCompactDone(ctx actor.Context, msg *compactDone) {
	if msg.step != t.step || t.done {
		return
	}
	c := &t.cmp
	t.usage = t.usage.Add(msg.usage)
	if msg.fixed > 0 {
		c.fixed = msg.fixed
	}
	switch {
	case msg.err != nil:
		t.log.Warn().Err(msg.err).Str("session", t.in.sessionKey).Msg("compaction failed")
		if t.in.compact.manual {
			t.finish(ctx, "", msg.err)
			return
		}
	case msg.summary == "":
		if t.in.compact.manual {
			t.finish(ctx, fmt.Sprintf("Nothing to compact yet: the conversation holds ~%s tokens, and the most recent are kept as they are.",
				agent.FormatTokens(msg.after)), nil)
			return
		}
	default:
		c.summary, c.summaryAt = t.in.deps.redactor().apply(msg.summary), t.in.deps.now()
		c.covered += msg.cut - msg.start
		c.count += msg.count
		c.compacted, c.flushed = true, false
		t.log.Info().Str("session", t.in.sessionKey).Int("summarized", msg.count).Int("tokens_after", msg.after).
			Bool("overflow", c.overflow != nil).Msg("compacted")
		if t.in.compact.manual {
			t.finish(ctx, fmt.Sprintf("Compacted: %d messages summarized, context ~%s of %s tokens.",
				msg.count, agent.FormatTokens(msg.after), agent.FormatTokens(t.in.window())), nil)
			return
		}
		c.overflow = nil
	}
	if c.overflow != nil { // nothing could be freed: the overflow stands
		t.finish(ctx, "", c.overflow)
		return
	}
	c.skipCheck = true
	t.injectSteered() // messages the user sent meanwhile
	t.startLLM(ctx)
}

// compactionReport is what the Session needs to store the run's compaction.
func (t *Turn) compactionReport() compactionReport {
	c := &t.cmp
	return compactionReport{compacted: c.compacted, summary: c.summary, summaryAt: c.summaryAt, covered: c.covered, fixed: c.fixed}
}
