package actors

import (
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
)

// /subagents list|kill <target>|log <target>: the conversation's sub-agents, without a model
// call. Targets are what the subagents tool takes: a list number, label, run id or key.

// subagentsCommand answers /subagents.
func (s *Session) subagentsCommand(ctx actor.Context, args []string) string {
	action, target := "list", ""
	if len(args) > 0 {
		action = strings.ToLower(args[0])
	}
	if len(args) > 1 {
		target = strings.Join(args[1:], " ")
	}
	switch action {
	case "list":
		return s.childListText()
	case "kill", "log":
		if target == "" {
			return fmt.Sprintf("Usage: /subagents %s <number|label|run id>; /subagents list shows them.", action)
		}
		found, err := s.findChildren(target, action == "kill")
		if err != nil {
			return err.Error()
		}
		if action == "log" {
			return s.childLog(found[0])
		}
		n := 0
		for _, l := range found {
			if s.childActive(l) {
				ctx.Send(s.router, &stopSubagent{key: l.Child})
				n++
			}
		}
		if n == 0 {
			return "That sub-agent already ended."
		}
		return fmt.Sprintf("Stopping %d sub-agent(s).", n)
	}
	return "Usage: /subagents list | kill <number|label|all> | log <number|label>"
}

// childListText lists the children, one line each.
func (s *Session) childListText() string {
	rows := s.childList()
	if len(rows) == 0 {
		return "No sub-agents in this conversation."
	}
	var b strings.Builder
	b.WriteString("Sub-agents:")
	for _, r := range rows {
		name := r["label"].(string)
		if name == "" {
			name = r["runId"].(string)[:8]
		}
		if r["mode"] == "session" {
			name += fmt.Sprintf(" (mode session, %d runs)", r["runs"])
		}
		fmt.Fprintf(&b, "\n%d. %s — %s, %s, tokens %d in / %d out", r["n"], name, r["status"], r["runtime"], r["tokensIn"], r["tokensOut"])
		if why := r["why"].(string); why != "" {
			b.WriteString(" (" + why + ")")
		}
	}
	return b.String()
}

// childLog shows one child's task and answer, and the last entries of its transcript.
func (s *Session) childLog(l *subagent.Link) string {
	var entries []persistence.Entry
	_ = s.deps.Store.View(func(r persistence.Reader) error { // a read of memory-mapped pages, like onStarted's
		if full, ok, err := subagent.Get(r, l.Child); err == nil && ok {
			l = &full // the task: the parent keeps a slim copy (subagent.go)
		}
		var err error
		entries, err = r.Messages(l.Child, 0)
		return err
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) — %s\nTask: %s", l.Name(), l.Child, l.Status, capBytes(l.Task, 500))
	for _, e := range entries[max(0, len(entries)-10):] {
		line := e.Content
		for _, c := range e.ToolCalls {
			line += " [" + c.Name + " " + capBytes(c.Arguments, 120) + "]"
		}
		fmt.Fprintf(&b, "\n%s: %s", e.Role, capBytes(strings.TrimSpace(line), 300))
	}
	return b.String()
}

// subagentStatusLine is /status's line about sub-agents ("" when the session has none).
func (s *Session) subagentStatusLine() string {
	if len(s.subs.children) == 0 {
		return ""
	}
	q := s.queuedChildren()
	if q == 0 {
		return fmt.Sprintf("Sub-agents: %d running, %d spawned in all (/subagents list)", s.activeChildren(), len(s.subs.children))
	}
	return fmt.Sprintf("Sub-agents: %d running, %d queued (subagents.maxConcurrent), %d spawned in all (/subagents list)",
		s.activeChildren()-q, q, len(s.subs.children))
}
