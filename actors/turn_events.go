package actors

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/streaming"
)

// A Turn publishes its run's events (messages.RunEvent) on Deps.Events as they happen, from
// its Receive: run.start first, run.end last, tool.start/tool.end around each call, text.delta
// while an answer streams (textStream, from the model call's goroutine), plan.update for
// update_plan and openclaw-process step blocks. They
// are for watching; the transcript the Session stores is the record. The memory flush is
// silent. Publishing never waits (package events).

// maxSummary caps a tool.start summary, in characters.
const maxSummary = 120

// runEvents is a Turn's numbering and memory of its events.
type runEvents struct {
	run     string
	started time.Time
	tools   map[string]time.Time // call id → when its tool.start was published
	plan    []messages.PlanStep  // the run's plan, merged from step blocks and update_plan
	final   string               // a final block's summary, for run.end
}

// publish stamps ev with the run and the time and hands it to the bus, which numbers it.
func (t *Turn) publish(ev messages.RunEvent) {
	bus := t.in.deps.Events
	if bus == nil || t.cmp.flushing {
		return
	}
	e := &t.evs
	if e.run == "" {
		e.run = "run-" + strconv.FormatUint(rand.Uint64(), 36)
		e.started, e.tools = t.in.deps.now(), map[string]time.Time{}
	}
	ev.Session, ev.Run, ev.Time = t.in.sessionKey, e.run, t.in.deps.now()
	bus.Publish(ev)
}

// toolStarted publishes tool.start for c.
func (t *Turn) toolStarted(c messages.ToolCall) {
	t.publish(messages.RunEvent{Kind: messages.RunToolStart, ID: c.ID, Name: c.Name, Summary: toolSummary(c)})
	if t.evs.tools != nil {
		t.evs.tools[c.ID] = t.in.deps.now()
	}
}

// toolEnded publishes tool.end for a call whose tool.start was published; a call refused
// before it started gets both.
func (t *Turn) toolEnded(c messages.ToolCall, ok bool) {
	start, seen := t.evs.tools[c.ID]
	if !seen {
		t.toolStarted(c)
		start = t.in.deps.now()
	}
	delete(t.evs.tools, c.ID)
	t.publish(messages.RunEvent{Kind: messages.RunToolEnd, ID: c.ID, Name: c.Name, OK: &ok,
		MS: t.in.deps.now().Sub(start).Milliseconds()})
}

// toolStopped publishes tool.end for a call stopped with its run: not ok, Status "stopped".
func (t *Turn) toolStopped(c messages.ToolCall) {
	start := t.evs.tools[c.ID]
	delete(t.evs.tools, c.ID)
	ok := false
	t.publish(messages.RunEvent{Kind: messages.RunToolEnd, ID: c.ID, Name: c.Name, OK: &ok, Status: messages.ToolEndStopped,
		MS: t.in.deps.now().Sub(start).Milliseconds()})
}

// callByID is the pending call with that id.
func (t *Turn) callByID(id string) messages.ToolCall {
	for _, c := range t.pending {
		if c.ID == id {
			return c
		}
	}
	return messages.ToolCall{ID: id}
}

// shownText publishes an answer's progress blocks (its text went out while it streamed, see
// textStream) and returns the text the user is sent: the answer without its well-formed
// openclaw-process blocks.
func (t *Turn) shownText(ctx actor.Context, answer string) string {
	text, blocks := agent.ParseProcess(answer)
	for _, b := range blocks {
		switch {
		case b.Start != nil:
			t.publish(messages.RunEvent{Kind: messages.RunStart, Goal: b.Start.Goal})
		case b.Step != nil:
			t.updatePlan(ctx, []messages.PlanStep{*b.Step}, "", true)
		case b.Final != nil:
			t.evs.final = b.Final.Summary
		}
	}
	return text
}

// updatePlan publishes the run's plan, and shows it to the chat (a PlanUpdated TurnEvent for
// the Connector's draft): steps replace it, or with merge update the steps of the same id and
// add the others at the end.
func (t *Turn) updatePlan(ctx actor.Context, steps []messages.PlanStep, explanation string, merge bool) {
	if !merge {
		t.evs.plan = append([]messages.PlanStep(nil), steps...)
	} else {
	next:
		for _, s := range steps {
			for i := range t.evs.plan {
				if t.evs.plan[i].ID == s.ID {
					t.evs.plan[i] = s
					continue next
				}
			}
			t.evs.plan = append(t.evs.plan, s)
		}
	}
	t.publish(messages.RunEvent{Kind: messages.RunPlanUpdate, Explanation: explanation,
		Steps: append([]messages.PlanStep(nil), t.evs.plan...)})
	if !t.cmp.flushing {
		ctx.Send(ctx.Parent(), &messages.TurnEvent{SessionKey: t.in.sessionKey, Kind: messages.PlanUpdated,
			Steps: append([]messages.PlanStep(nil), t.evs.plan...)})
	}
}

// subagentStarted publishes subagent.start when a sessions_spawn call was accepted.
func (t *Turn) subagentStarted(c messages.ToolCall, result string) {
	var res struct {
		Status string `json:"status"`
		Child  string `json:"childSessionKey"`
	}
	if json.Unmarshal([]byte(result), &res) != nil || res.Child == "" {
		return
	}
	var args struct {
		Label string `json:"label"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	t.publish(messages.RunEvent{Kind: messages.SubagentStart, ID: c.ID, Child: res.Child, Name: args.Label})
}

// runEnded publishes run.end: ok, error or cancelled, with the run's tokens and time.
func (t *Turn) runEnded(err error) {
	status := "ok"
	switch {
	case errors.Is(err, context.Canceled):
		status = "cancelled"
	case err != nil:
		status = "error"
	}
	u := t.usage
	ms := int64(0)
	if !t.evs.started.IsZero() {
		ms = t.in.deps.now().Sub(t.evs.started).Milliseconds()
	}
	t.publish(messages.RunEvent{Kind: messages.RunEnd, Status: status, Tokens: u.InputTokens + u.OutputTokens,
		MS: ms, Summary: t.evs.final})
}

// toolSummary is a short human line for a call: "read notes.txt", "exec: curl wttr.in/Beijing",
// "sessions_spawn WeatherCollector". The arguments were redacted already; the line is kept on
// one line, without control characters, and capped.
func toolSummary(c messages.ToolCall) string {
	var args map[string]any
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	str := func(k string) string { s, _ := args[k].(string); return s }
	line := c.Name
	switch {
	case c.Name == "exec" && str("command") != "":
		line = "exec: " + str("command")
	case c.Name == "sessions_spawn" && (str("label") != "" || str("agentId") != ""):
		line = c.Name + " " + firstNonEmpty(str("label"), str("agentId"))
	case c.Name == "update_plan":
		if steps, ok := args["steps"].([]any); ok {
			line = c.Name + " (" + strconv.Itoa(len(steps)) + " steps)"
		}
	default:
		for _, k := range []string{"path", "file_path", "url", "query", "command", "sessionKey", "action"} {
			if s := str(k); s != "" {
				line = c.Name + " " + s
				break
			}
		}
	}
	return capLine(line, maxSummary)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// capLine folds s onto one line without control characters and cuts it at n characters.
func capLine(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// publishToolDone publishes what a finished call reported: its plan, an accepted sub-agent,
// and its tool.end.
func (t *Turn) publishToolDone(ctx actor.Context, c messages.ToolCall, msg *toolDone) {
	ok := !msg.result.IsError
	if ok && msg.plan != nil {
		t.updatePlan(ctx, msg.plan.Steps, msg.plan.Explanation, false)
	}
	if ok && c.Name == "sessions_spawn" {
		t.subagentStarted(c, msg.result.Content)
	}
	t.toolEnded(c, ok)
}

// textStream publishes an answer's text while it streams, from the goroutine of the model
// call: word by word (streaming.WordEnd; CJK text character by character), redacted, without
// openclaw-process blocks. A line that may open a fence is held until it is complete (a
// progress block's lines are not shown; a block that turns out malformed is published as text
// when it closes, or when the answer ends unclosed), and so is text that may be the start of
// a secret the next piece would complete (redact.Redactor.Pending: the pieces are redacted as
// the whole would be). The Turn publishes the blocks' events once the answer is complete.
// The same pieces go to the chat (show: TextStreamed TurnEvents to the Session, for the
// Connector's partial and block drafts). A nil *textStream publishes nothing.
type textStream struct {
	bus          *events.Bus // nil: no watchers
	show         func(text string)
	session, run string
	now          func() time.Time
	red          redactor
	line         strings.Builder // of the line being written
	sent         int             // bytes of line passed on (to held or published)
	block        []string        // lines of an open progress block
	held         string          // passed on, not published yet: it may end in part of a secret
}

// textStream returns the stream of the next model answer, or nil when nobody may see it.
func (t *Turn) textStream(ctx actor.Context) *textStream {
	if t.cmp.flushing {
		return nil
	}
	d := t.in.deps
	s := &textStream{session: t.in.sessionKey, run: t.evs.run, now: d.now, red: d.redactor()}
	if d.Events != nil && t.evs.run != "" {
		s.bus = d.Events
	}
	parent, root, step := ctx.Parent(), ctx.ActorSystem().Root, strconv.Itoa(t.step)
	s.show = func(text string) {
		root.Send(parent, &messages.TurnEvent{SessionKey: s.session, Kind: messages.TextStreamed, StepID: step, Text: text})
	}
	return s
}

// write takes a piece of the answer's text.
func (s *textStream) write(text string) {
	if s == nil {
		return
	}
	var out strings.Builder
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			s.line.WriteString(text)
			break
		}
		s.line.WriteString(text[:i+1])
		if shown := s.takeLine(s.line.String()); len(shown) > s.sent {
			out.WriteString(shown[s.sent:])
		}
		s.line.Reset()
		s.sent = 0
		text = text[i+1:]
	}
	// Every piece with a new word end is published, not paced: pacing here would leave the
	// last words unshown for as long as the model pauses (nothing runs this code until its
	// next piece), and the Connector coalesces a draft's edits anyway.
	out.WriteString(s.words())
	s.publish(out.String(), false)
}

// words is what more of the line being written may be passed on: up to its last word end,
// unless a progress block is open or the line may open a fence.
func (s *textStream) words() string {
	line := s.line.String()
	if s.block != nil || mayBeFence(line) {
		return ""
	}
	end := s.sent + streaming.WordEnd(line[s.sent:]) // line[:sent] ends at a word end: scan the rest only
	if end <= s.sent {
		return ""
	}
	piece := line[s.sent:end]
	s.sent = end
	return piece
}

// mayBeFence reports whether a line being written may turn out a fence line (``` after
// spaces), whose info string says whether a progress block opens: it is held until it ends.
func mayBeFence(line string) bool {
	t := strings.TrimLeftFunc(line, unicode.IsSpace)
	return strings.HasPrefix(t, "```") || strings.HasPrefix("```", t)
}

// takeLine returns what of a whole line is shown: nothing while a progress block is open.
func (s *textStream) takeLine(line string) string {
	trimmed := strings.TrimSpace(line)
	if s.block == nil {
		if trimmed == "```"+agent.ProcessFence {
			s.block = []string{line}
			return ""
		}
		return line
	}
	s.block = append(s.block, line)
	if trimmed != "```" {
		return ""
	}
	text := strings.Join(s.block, "")
	s.block = nil
	if _, blocks := agent.ParseProcess(text); len(blocks) > 0 {
		return ""
	}
	return text // malformed: shown as text
}

// end publishes what is left when the answer is complete.
func (s *textStream) end() {
	if s == nil {
		return
	}
	rest := s.line.String()[s.sent:]
	if s.block != nil { // the last line, without its newline, may close the open block
		rest = s.takeLine(s.line.String())
		rest += strings.Join(s.block, "") // a block still open is shown as text
	}
	s.publish(rest, true)
	s.block = nil
	s.line.Reset()
	s.sent = 0
}

// publish redacts and publishes text after what was held: all of it at the answer's end,
// else up to where a secret may be starting (and then up to a word end before it: a word is
// never cut, whatever the redactor holds back).
func (s *textStream) publish(text string, final bool) {
	text = s.held + text
	cut := len(text)
	if !final {
		if cut = s.red.pending(text); cut < len(text) {
			cut = streaming.WordEnd(text[:cut])
		}
	}
	text, s.held = text[:cut], text[cut:]
	if text == "" {
		return
	}
	text = s.red.apply(text)
	s.bus.Publish(messages.RunEvent{Session: s.session, Run: s.run, Time: s.now(), Kind: messages.RunTextDelta, Text: text})
	s.show(text)
}
