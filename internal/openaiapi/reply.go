package openaiapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
)

// reply is what a request collects of its run: the replies sent to its chat and the usage.
type reply struct {
	id      string
	model   string
	created int64

	texts  []string
	failed string // a failed run's explanation (the reply the chat would have got)
	usage  messages.Usage
	calls  []messages.ToolCall // the client tool calls the run ended with (tools.go)
}

// take notes one event and reports whether the run ended.
func (rs *reply) take(ev event) bool {
	switch {
	case ev.out != nil && ev.out.Failed:
		rs.failed = ev.out.Text
	case ev.out != nil:
		rs.texts = append(rs.texts, ev.out.Text)
	case ev.final != nil:
		rs.usage, rs.calls = ev.final.Usage, ev.final.ClientCalls
		return true
	}
	return false
}

func (rs *reply) text() string { return strings.Join(rs.texts, "\n\n") }

// finish is the answer's finish_reason: "tool_calls" when the run ended with client calls.
func (rs *reply) finish() string {
	if len(rs.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// await answers a non-streamed request once its run ended. A non-nil error means the
// request gave up waiting (and was answered with an error).
func (h *Handler) await(ctx context.Context, w http.ResponseWriter, ex *exchange, rs *reply) error {
	for {
		select {
		case ev := <-ex.events:
			if !rs.take(ev) {
				continue
			}
			if rs.failed != "" {
				writeError(w, newError(http.StatusBadGateway, "server_error", "run_failed", rs.failed))
				return nil
			}
			msg := &answer{Role: "assistant", ToolCalls: wireCalls(rs.calls, false)}
			if text := rs.text(); text != "" || len(rs.calls) == 0 {
				msg.Content = &text
			}
			writeJSON(w, http.StatusOK, completion{ID: rs.id, Object: "chat.completion", Created: rs.created, Model: rs.model,
				Choices: []choice{{Message: msg, FinishReason: ptr(rs.finish())}},
				Usage:   usageOf(rs.usage)})
			return nil
		case <-ctx.Done():
			writeError(w, h.gaveUp(ctx))
			return ctx.Err()
		}
	}
}

// gaveUp is the error of a request that stopped waiting for its run.
func (h *Handler) gaveUp(ctx context.Context) *apiError {
	if ctx.Err() == context.DeadlineExceeded {
		return newError(http.StatusGatewayTimeout, "server_error", "timeout",
			fmt.Sprintf("no answer within %v; the message stays in the session, which answers it there", h.cfg.Timeout))
	}
	return newError(499, "invalid_request_error", "client_closed", "the client went away")
}

// keepAlive is how often a streamed response that has nothing to say sends an SSE comment,
// so proxies and clients do not time it out during a long run.
const keepAlive = 15 * time.Second

// liveBuffer is the run-event subscription's buffer of a streamed request.
const liveBuffer = 1024

// stream answers a streamed request: the assistant's role at once, the agent's text as the
// model writes it (live, when the bus is there), the reply when it is sent (what of it the live
// text did not show already), then the finish reason, the usage (when the client asked for
// it with stream_options.include_usage, as OpenAI sends it) and [DONE].
func (h *Handler) stream(ctx context.Context, w http.ResponseWriter, ex *exchange, rs *reply, live *events.Subscription, withUsage bool) error {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(d *answer, finish *string) completion {
		return completion{ID: rs.id, Object: "chat.completion.chunk", Created: rs.created, Model: rs.model,
			Choices: []choice{{Delta: d, FinishReason: finish}}}
	}
	send(chunk(&answer{Role: "assistant", Content: ptr("")}, nil))
	content := func(text string) {
		if text != "" {
			send(chunk(&answer{Content: &text}, nil))
		}
	}
	if err := h.follow(ctx, w, ex, rs, live, content); err != nil {
		send(map[string]*apiError{"error": h.gaveUp(ctx)})
		return err
	}
	if rs.failed != "" {
		send(map[string]*apiError{"error": newError(http.StatusBadGateway, "server_error", "run_failed", rs.failed)})
		return nil
	}
	for _, c := range wireCalls(rs.calls, true) { // one delta per call, each whole
		send(chunk(&answer{ToolCalls: []wireCall{c}}, nil))
	}
	send(chunk(&answer{}, ptr(rs.finish())))
	if withUsage {
		send(completion{ID: rs.id, Object: "chat.completion.chunk", Created: rs.created, Model: rs.model,
			Choices: []choice{}, Usage: usageOf(rs.usage)})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
	return nil
}

// follow waits for the run's end, passing show the text to show as it comes: the agent's text
// as the model writes it (live, when the bus is there), then what of each reply the live text
// did not show. While nothing comes it sends an SSE keep-alive comment. It returns nil when
// the run ended (rs holds it), ctx's error when the request stopped waiting.
func (h *Handler) follow(ctx context.Context, w http.ResponseWriter, ex *exchange, rs *reply, live *events.Subscription, show func(string)) error {
	flusher, _ := w.(http.Flusher)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	var lv liveText
	var evs <-chan messages.RunEvent
	if live != nil {
		evs = live.Events()
	}
	sent := 0
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				evs = nil
				continue
			}
			show(lv.take(ev))
		case ev := <-ex.events:
			done := rs.take(ev)
			for ; sent < len(rs.texts); sent++ {
				show(lv.rest(rs.texts[sent]))
			}
			if done {
				return nil
			}
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			if flusher != nil {
				flusher.Flush()
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// liveText is what a streamed answer showed of the run's text as the model wrote it.
type liveText struct {
	shown string // everything shown: the steps' texts, then replies
	step  string // shown of the current model answer (since the last tool call)
	next  bool   // a tool call ended the step: the next text opens a new paragraph
	// ahead is what a reply showed before its text.delta events came in (the bus and the
	// reply are two streams): those deltas are shown already when they arrive.
	ahead string
}

// take returns the text to show for a run event: text.delta's text, a paragraph break first
// when it opens the answer after a tool call.
func (l *liveText) take(ev messages.RunEvent) string {
	switch ev.Kind {
	case messages.RunToolStart:
		l.next, l.step, l.ahead = true, "", ""
	case messages.RunTextDelta:
		if l.ahead != "" {
			if strings.HasPrefix(l.ahead, ev.Text) {
				l.ahead = l.ahead[len(ev.Text):]
				return ""
			}
			l.ahead = ""
		}
		text := ev.Text
		if l.next && l.shown != "" {
			text = paragraph(l.shown) + strings.TrimLeft(text, "\n")
		}
		l.next = false
		l.shown += text
		l.step += ev.Text
		return text
	}
	return ""
}

// rest returns what to show of a reply: nothing when the live text ended with it, the part
// the current step's text did not show yet, or, when the reply differs from what was shown
// (its directives removed, a failure explained), the whole reply as a new paragraph.
func (l *liveText) rest(reply string) string {
	var text string
	step := strings.TrimLeft(l.step, " \t\n")
	ahead := ""
	switch {
	case l.shown == "":
		text, ahead = reply, reply
	case strings.HasSuffix(strings.TrimRight(l.shown, " \t\n"), strings.TrimSpace(reply)):
		return ""
	case step != "" && strings.HasPrefix(reply, step):
		text = reply[len(step):]
		ahead = text
	default:
		text = paragraph(l.shown) + reply
	}
	l.shown += text
	l.step, l.ahead = "", ahead
	return text
}

// paragraph is what opens a new paragraph after shown.
func paragraph(shown string) string {
	switch {
	case strings.HasSuffix(shown, "\n\n"):
		return ""
	case strings.HasSuffix(shown, "\n"):
		return "\n"
	}
	return "\n\n"
}
