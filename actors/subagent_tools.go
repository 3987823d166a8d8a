package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
)

var _ tools.Sessions = (*toolsRuntime)(nil)

// Sessions implements tools.Sessions: sessions_list and sessions_history read the store;
// the other tools go to the Session whose run called them, through the Router.
func (r *toolsRuntime) Sessions(ctx context.Context, env tools.Env, tool string, args any) (json.RawMessage, error) {
	switch tool {
	case subagent.ToolList:
		return r.listSessions(env, args.(*subagent.ListArgs))
	case subagent.ToolHistory:
		return r.history(args.(*subagent.HistoryArgs))
	case subagent.ToolSend:
		return r.send(ctx, env, args.(*subagent.SendArgs))
	}
	return r.call(ctx, env, tool, args)
}

// call hands a session tool's call to the Session whose run made it and waits for its answer.
func (r *toolsRuntime) call(ctx context.Context, env tools.Env, tool string, args any) (json.RawMessage, error) {
	reply := make(chan sessionsReply, 1)
	r.root.Send(r.router, &sessionsCall{key: env.SessionKey, env: env, tool: tool, args: args, reply: reply})
	select {
	case rep := <-reply:
		return rep.out, rep.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", tool, ctx.Err())
	}
}

// yielded reports whether the current step called sessions_yield and was answered "yielded".
func (t *Turn) yielded() bool {
	for _, c := range t.pending {
		if r := t.results[c.ID]; c.Name == subagent.ToolYield && r != nil && !r.IsError {
			return true
		}
	}
	return false
}

// subagentsTool lists, stops or steers the session's children.
func (s *Session) subagentsTool(ctx actor.Context, call *sessionsCall) {
	a := call.args.(*subagent.SubagentsArgs)
	if a.Action == "list" {
		call.answer(s.childList(), nil)
		return
	}
	targets, err := s.findChildren(a.Target, a.Action == "kill")
	if err != nil {
		call.answer(nil, err)
		return
	}
	var out []map[string]any
	for _, l := range targets {
		if a.Action == "steer" && l.Addressable() { // mode session: more work, a run of its own
			note := "a new run of the sub-agent; its result arrives as a completion event"
			if s.childActive(l) {
				note = "the sub-agent is still working: this is its next run, which reports with a completion event of its own"
			}
			s.sendFollowUp(ctx, l, s.steerEvent(l, a.Message), nil) // subagent_followup.go
			out = append(out, map[string]any{"label": l.Label, "runId": l.RunID, "status": "steered", "note": note})
			continue
		}
		if !s.childActive(l) {
			note := "already ended"
			if !l.Archived.IsZero() {
				note = "archived: spawn a new sub-agent"
			}
			out = append(out, map[string]any{"label": l.Label, "runId": l.RunID, "status": l.Status, "note": note})
			continue
		}
		if a.Action == "kill" {
			ctx.Send(s.router, &stopSubagent{key: l.Child})
			out = append(out, map[string]any{"label": l.Label, "runId": l.RunID, "status": "stopping"})
			continue
		}
		s.sendInternal(ctx, l.Child, s.steerEvent(l, a.Message), nil)
		out = append(out, map[string]any{"label": l.Label, "runId": l.RunID, "status": "steered"})
	}
	call.answer(map[string]any{"action": a.Action, "results": out}, nil)
}

// childList is what subagents list and /subagents list show.
func (s *Session) childList() []map[string]any {
	now := s.deps.now()
	out := []map[string]any{}
	for i, l := range s.subs.children {
		status := s.childStatus(l)
		if !l.Archived.IsZero() {
			status += " (archived)"
		}
		out = append(out, map[string]any{"n": i + 1, "label": l.Label, "runId": l.RunID, "sessionKey": l.Child,
			"mode": l.Mode, "runs": l.Runs, "status": status, "why": l.Why, "runtime": l.Runtime(now).String(),
			"tokensIn": l.Usage.InputTokens, "tokensOut": l.Usage.OutputTokens})
	}
	return out
}

// findChildren resolves a target: a list number, label, run id (or its first part), session
// key, or with all "all" / "*".
func (s *Session) findChildren(target string, all bool) ([]*subagent.Link, error) {
	target = strings.TrimSpace(target)
	if all && (target == "all" || target == "*") {
		return s.subs.children, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(target, "#")); err == nil && n >= 1 && n <= len(s.subs.children) {
		return s.subs.children[n-1 : n], nil
	}
	var found []*subagent.Link
	for _, l := range s.subs.children {
		if l.Child == target || l.RunID == target || strings.HasPrefix(l.RunID, target+"-") || strings.EqualFold(l.Label, target) {
			found = append(found, l)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no sub-agent of this session matches %q (subagents list shows them)", target)
	}
	return found, nil
}

// steerEvent is a message from the parent to a running child, or more work for one of mode
// "session" (subagent.FollowUpSource).
func (s *Session) steerEvent(l *subagent.Link, text string) messages.Inbound {
	return messages.Inbound{System: true, Source: subagent.FollowUpSource(s.key), SessionKey: l.Child, Time: s.deps.now(),
		Text:     "[Message from the agent that spawned you (session " + s.key + "), not from a user]\n" + s.deps.redactor().apply(text),
		Standing: &messages.Standing{Tools: s.turnTools.Allowed(), Owner: s.turnReach.Owner}}
}

// sendInternal puts in into the inbox of key, then has the Router deliver it; done, when set,
// hears whether it was stored.
func (s *Session) sendInternal(ctx actor.Context, key string, in messages.Inbound, done func(error)) {
	root, router := ctx.ActorSystem().Root, s.router
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			seq, err := tx.AppendInbox(key, in)
			in.InboxSeq = seq
			return err
		},
		Done: func(err error) {
			if err == nil {
				root.Send(router, &routeInbound{in: in})
			}
			if done != nil {
				done(err)
			}
		},
	})
}

// listSessions answers sessions_list from the store: keys, kinds, parents, last update.
func (r *toolsRuntime) listSessions(env tools.Env, a *subagent.ListArgs) (json.RawMessage, error) {
	var infos []persistence.SessionInfo
	var links map[string]subagent.Link
	err := r.store.View(func(rd persistence.Reader) error {
		var err error
		if infos, err = rd.Sessions(); err != nil {
			return err
		}
		links, err = subagent.All(rd)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sessions_list: %w", err)
	}
	limit := a.Limit
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	type row struct {
		Key     string `json:"sessionKey"`
		Kind    string `json:"kind"`
		Agent   string `json:"agentId"`
		Parent  string `json:"parent,omitempty"`
		Label   string `json:"label,omitempty"`
		Status  string `json:"status,omitempty"`
		Channel string `json:"channel,omitempty"`
		Updated string `json:"updated"`
		Self    bool   `json:"self,omitempty"`
	}
	rows := []row{}
	for i := len(infos) - 1; i >= 0; i-- {
		in := infos[i]
		rw := row{Key: in.Key, Kind: "chat", Agent: in.AgentID, Channel: in.Channel, Updated: in.Updated.UTC().Format("2006-01-02T15:04:05Z"), Self: in.Key == env.SessionKey}
		if l, ok := links[in.Key]; ok {
			rw.Kind, rw.Parent, rw.Label, rw.Status = "subagent", l.Parent, l.Label, l.Status
		}
		if a.Kinds != "" && rw.Kind != a.Kinds {
			continue
		}
		rows = append(rows, rw)
	}
	sortRowsByUpdated(rows, func(r row) string { return r.Updated })
	if len(rows) > limit {
		rows = rows[:limit]
	}
	return json.Marshal(map[string]any{"sessions": rows})
}

// history answers sessions_history: the session's last entries, tool calls only when asked.
func (r *toolsRuntime) history(a *subagent.HistoryArgs) (json.RawMessage, error) {
	var entries []persistence.Entry
	var ok bool
	err := r.store.View(func(rd persistence.Reader) error {
		var err error
		if _, ok, err = rd.Session(a.SessionKey); err != nil || !ok {
			return err
		}
		entries, err = rd.Messages(a.SessionKey, 0)
		return err
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("sessions_history: %w", err)
	case !ok:
		return nil, fmt.Errorf("no session %q (sessions_list shows the keys)", a.SessionKey)
	}
	limit := a.Limit
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	type item struct {
		Role    string `json:"role"`
		Content string `json:"content,omitempty"`
		Tool    string `json:"tool,omitempty"`
		Args    string `json:"args,omitempty"`
		Error   bool   `json:"error,omitempty"`
	}
	var items []item
	for _, e := range entries {
		switch {
		case e.Role == messages.RoleTool:
			if a.IncludeTools {
				items = append(items, item{Role: "tool", Tool: e.ToolName, Content: capBytes(e.Content, 2000), Error: e.IsError})
			}
		case len(e.ToolCalls) > 0 && a.IncludeTools:
			for _, c := range e.ToolCalls {
				items = append(items, item{Role: "assistant", Tool: c.Name, Args: capBytes(c.Arguments, 500)})
			}
			if e.Content != "" {
				items = append(items, item{Role: "assistant", Content: capBytes(e.Content, 4000)})
			}
		case e.Content != "":
			items = append(items, item{Role: string(e.Role), Content: capBytes(e.Content, 4000)})
		}
	}
	if len(items) > limit {
		items = items[len(items)-limit:]
	}
	return json.Marshal(map[string]any{"sessionKey": a.SessionKey, "messages": items})
}
