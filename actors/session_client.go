package actors

import (
	"fmt"
	"strings"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
)

// The session's side of client tools (turn_client.go): a run that parked with client calls
// left them in the history without a result; the next run starts with their results, from the
// caller's next message (Inbound.ToolResults), before anything else, so the history stays a
// model's conversation (every call answered, right after it).

// clientTools are the client tools of the run answering msgs: the last message's that has any.
func clientTools(msgs []messages.Inbound) *messages.ClientTools {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].ClientTools != nil {
			return msgs[i].ClientTools
		}
	}
	return nil
}

// clientResults are the entries that answer the calls the run's history ends with: the
// results the answered messages bring, in the calls' order, wrapped as data from outside, and
// for a call none answers, a note that the caller sent none (it sent a new message instead).
// answered reports whether a message brought nothing but results of those calls: it needs
// no user entry. Results of calls that do not wait (a second request with the same results)
// stay in their message's user entry, as text (userEntry).
func (s *Session) clientResults(history []messages.ChatMessage) (entries []messages.ChatMessage, answered func(messages.Inbound) bool) {
	waiting := waitingCalls(history)
	got := map[string]messages.ChatMessage{}
	for _, in := range s.answering {
		for _, r := range in.ToolResults {
			got[r.ToolCallID] = r
		}
	}
	red, now := s.deps.redactor(), s.deps.now()
	ids := map[string]bool{}
	for _, c := range waiting {
		ids[c.ID] = true
		m := toolResult(c, "no result: the caller sent a new message instead of this call's result", true)
		if r, ok := got[c.ID]; ok {
			m = toolResult(c, agent.WrapUntrusted("tool:"+c.Name, red.apply(r.Content)), r.IsError)
		}
		m.Time = now
		entries = append(entries, m)
	}
	return entries, func(in messages.Inbound) bool {
		if len(in.ToolResults) == 0 || strings.TrimSpace(in.Text) != "" || len(in.Media) > 0 {
			return false
		}
		for _, r := range in.ToolResults {
			if !ids[r.ToolCallID] {
				return false
			}
		}
		return true
	}
}

// waitingCalls are the calls of the history's last assistant message that have no result,
// when nothing but results follows it: a run parked there with calls of client tools.
func waitingCalls(history []messages.ChatMessage) []messages.ToolCall {
	done := map[string]bool{}
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		switch {
		case m.Role == messages.RoleTool:
			done[m.ToolCallID] = true
			continue
		case m.Role != messages.RoleAssistant || len(m.ToolCalls) == 0:
			return nil
		}
		var out []messages.ToolCall
		for _, c := range m.ToolCalls {
			if !done[c.ID] {
				out = append(out, c)
			}
		}
		return out
	}
	return nil
}

// resultsText is how a message's tool results read when no call waits for them.
func resultsText(results []messages.ChatMessage) string {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "[result of the client's tool call %s]\n%s\n", r.ToolCallID, r.Content)
	}
	return strings.TrimSpace(b.String())
}
