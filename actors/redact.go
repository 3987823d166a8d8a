package actors

import (
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/redact"
)

// redactor replaces the gateway's secret values (API keys, bot tokens) in text that reaches a
// transcript, an LLM request, a tool or a platform: tool output can contain them (a command may
// read the gateway's environment), the model can copy one into a tool call's arguments and a
// user can paste one. Redacting at those sources keeps every later copy clean. See package
// redact for what counts as a copy.
type redactor struct{ r *redact.Redactor }

func newRedactor(secrets []string) redactor { return redactor{redact.New(secrets...)} }

func (r redactor) apply(s string) string { return r.r.String(s) }

// pending is where the end of s may hold the start of a secret that text yet to come would
// complete (redact.Redactor.Pending): text streamed in pieces is sent only up to there.
func (r redactor) pending(s string) int { return r.r.Pending(s) }

// toolCalls returns calls with their arguments redacted (a new slice when anything changed).
// The tool gets the redacted arguments too: a secret the model wrote into an argument never
// reaches a tool, a transcript or a later request.
func (r redactor) toolCalls(calls []messages.ToolCall) []messages.ToolCall {
	var out []messages.ToolCall
	for i, c := range calls {
		a := r.apply(c.Arguments)
		if a == c.Arguments {
			continue
		}
		if out == nil {
			out = append([]messages.ToolCall(nil), calls...)
		}
		out[i].Arguments = a
	}
	if out == nil {
		return calls
	}
	return out
}
