package actors

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
)

// Sub-agents, the parent's side. A sub-agent is a Session of its own (key
// agent:<id>:subagent:<uuid>), spawned by the Router when its parent's run calls
// sessions_spawn. The parent Session checks the limits, then writes in one transaction the
// child's link (package subagent), its session info and its task in its inbox; after the
// commit the tool answers "accepted" and the Router starts the child (subagent_router.go).
// The child's final run and its completion in the parent's inbox are one transaction
// (subagent_child.go), so the parent is woken exactly once per child, also across a crash.

// SubagentLimits bound the sub-agents one agent spawns (configs.SubagentsConfig).
type SubagentLimits struct {
	AllowAgents   []string      // other agents a child may run ("*": any)
	MaxSpawnDepth int           // default 1: children may not spawn
	MaxChildren   int           // running children per session, default 5
	MaxConcurrent int           // running sub-agents across the gateway (the default agent's counts), default 8
	RunTimeout    time.Duration // a child's run, 0 = only Limits.TurnTimeout
	ArchiveAfter  time.Duration // a finished child shows as archived after this long, default 60 min
}

func (l SubagentLimits) withDefaults() SubagentLimits {
	if l.MaxSpawnDepth <= 0 {
		l.MaxSpawnDepth = 1
	}
	if l.MaxChildren <= 0 {
		l.MaxChildren = 5
	}
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = 8
	}
	if l.ArchiveAfter <= 0 {
		l.ArchiveAfter = time.Hour
	}
	return l
}

func (l SubagentLimits) allows(from, to string) bool {
	return from == to || slices.Contains(l.AllowAgents, "*") || slices.Contains(l.AllowAgents, to)
}

// subagentState is what a Session knows of delegation: its own link when it is a sub-agent,
// and the children it spawned.
type subagentState struct {
	self     *subagent.Link
	children []*subagent.Link
	stopping bool           // a stop arrived: the run ends "stopped" (subagent_child.go)
	ending   bool           // endNow's record is being written: no run starts until it is durable
	sending  map[string]int // child → follow-ups being stored (subagent_followup.go)
	// droppedTo is the highest inbox seq of the follow-ups a stop dropped: such a follow-up
	// still on its way to the Session is not run (subagent_child.go).
	droppedTo uint64
}

type (
	// sessionsCall is one call of a session tool, for the Session whose run made it.
	sessionsCall struct {
		key   string
		env   tools.Env
		tool  string
		args  any
		reply chan sessionsReply // buffered
	}
	sessionsReply struct {
		out json.RawMessage
		err error
	}
	// childSpawned reports that a child's link and task are durable (or not).
	childSpawned struct {
		by   *Session
		link *subagent.Link
		call *sessionsCall
		err  error
	}
)

func (c *sessionsCall) answer(v any, err error) {
	if err != nil {
		c.reply <- sessionsReply{err: err}
		return
	}
	b, err := json.Marshal(v)
	c.reply <- sessionsReply{out: b, err: err}
}

// loadSubagents reads the session's own link and its children's (in onStarted).
func loadSubagents(r persistence.Reader, key string) (subagentState, error) {
	var st subagentState
	if subagent.IsKey(key) {
		l, ok, err := subagent.Get(r, key)
		if err != nil {
			return st, err
		}
		if ok {
			st.self = &l
		}
	}
	children, err := subagent.Children(r, key)
	for i := range children {
		st.children = append(st.children, slim(&children[i]))
	}
	return st, err
}

// slim is the copy of a child's link its parent keeps in memory: what lists, counts and
// targets need, without the task, the answer and the standing (up to 64 KB; /subagents log
// reads them from the store). A parent with many finished children stays small.
func slim(l *subagent.Link) *subagent.Link {
	c := *l
	c.Task, c.Answer, c.Tools, c.Deliver = "", "", nil, subagent.Target{}
	return &c
}

// onSessionsCall runs a session tool's call for this session's run.
func (s *Session) onSessionsCall(ctx actor.Context, call *sessionsCall) {
	if s.turn == nil {
		call.answer(nil, fmt.Errorf("%s works only during a run of this session", call.tool))
		return
	}
	switch call.tool {
	case subagent.ToolSpawn:
		s.spawnChild(ctx, call)
	case subagent.ToolYield:
		call.answer(s.yield(call.args.(*subagent.YieldArgs)))
	case subagent.ToolSubagents:
		s.subagentsTool(ctx, call)
	case subagent.ToolSend:
		s.onSendRequest(ctx, call) // subagent_send.go
	default:
		call.answer(nil, fmt.Errorf("%s: unknown session tool", call.tool))
	}
}

// spawnChild checks the limits and records the child; the tool is answered after the commit.
// A call that a crash interrupted, run again by the run that resumes, is answered with the
// child it spawned before the crash, if that was recorded: a call spawns at most one child.
func (s *Session) spawnChild(ctx actor.Context, call *sessionsCall) {
	args := call.args.(*subagent.SpawnArgs)
	if l := s.childOfCall(args.CallID); l != nil {
		s.log.Info().Str("session", s.key).Str("child", l.Child).Msg("sub-agent spawned before the restart: found again")
		s.answerSpawned(call, l)
		return
	}
	link, task, info, err := s.newChild(args)
	if err != nil {
		call.answer(nil, err)
		return
	}
	fork := s.forkEntries(link.Context)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if err := subagent.Put(tx, link); err != nil {
				return err
			}
			if err := tx.PutSession(info); err != nil {
				return err
			}
			if len(fork) > 0 {
				if _, err := tx.AppendMessages(link.Child, fork...); err != nil {
					return err
				}
			}
			_, err := tx.AppendInbox(link.Child, task)
			return err
		},
		Done: func(err error) { root.Send(self, &childSpawned{by: s, link: link, call: call, err: err}) },
	})
	s.subs.children = append(s.subs.children, slim(link)) // counts toward maxChildren at once
}

// newChild builds a child's link, task and session info, or says which limit refuses it.
func (s *Session) newChild(a *subagent.SpawnArgs) (*subagent.Link, messages.Inbound, persistence.SessionInfo, error) {
	var none persistence.SessionInfo
	lim := s.agent.Subagents.withDefaults()
	depth := 1
	if s.subs.self != nil {
		depth = s.subs.self.Depth + 1
	}
	if depth > lim.MaxSpawnDepth {
		return nil, messages.Inbound{}, none, fmt.Errorf("refused: sub-agents may nest %d deep here (agents[].subagents.maxSpawnDepth = %d); do the task yourself",
			lim.MaxSpawnDepth, lim.MaxSpawnDepth)
	}
	agentID := a.AgentID
	if agentID == "" {
		agentID = s.agent.ID
	}
	target := s.deps.agent(agentID)
	switch {
	case target == nil:
		return nil, messages.Inbound{}, none, fmt.Errorf("refused: there is no agent %q", agentID)
	case !lim.allows(s.agent.ID, agentID):
		return nil, messages.Inbound{}, none, fmt.Errorf("refused: agent %q is not allowed (agents[].subagents.allowAgents of %s = [%s])",
			agentID, s.agent.ID, strings.Join(lim.AllowAgents, ", "))
	}
	if n := s.activeChildren(); n >= lim.MaxChildren {
		return nil, messages.Inbound{}, none, fmt.Errorf("refused: this session already has %d running sub-agents (agents[].subagents.maxChildren = %d); wait for a completion or kill one",
			n, lim.MaxChildren)
	}
	model := ""
	if a.Model != "" {
		m, err := target.model(a.Model)
		if err != nil {
			return nil, messages.Inbound{}, none, fmt.Errorf("refused: model %q: %v", a.Model, err)
		}
		model = m.Label
	}
	timeout := lim.RunTimeout
	if t := time.Duration(a.RunTimeoutSeconds) * time.Second; t > 0 && (timeout == 0 || t < timeout) {
		timeout = t
	}
	now := s.deps.now()
	id := subagent.NewID()
	var deliver subagent.Target
	if n := len(s.answering); n > 0 {
		in := s.answering[n-1]
		deliver = subagent.Target{Channel: in.Channel, Account: in.Account, ChatID: in.ChatID, ThreadID: in.ThreadID,
			ChatType: in.ChatType, SenderID: in.SenderID}
	}
	if s.subs.self != nil { // a grandchild's result goes to its parent, never to a chat
		deliver = subagent.Target{}
	}
	link := &subagent.Link{Child: subagent.ChildKey(s.key, s.agent.ID, agentID, id), Parent: s.key, RunID: id, Call: s.spawnCall(a.CallID),
		AgentID: agentID, Label: a.Label, Task: s.deps.redactor().apply(a.Task), Model: model, Mode: a.Mode,
		Cleanup: a.Cleanup, Context: a.Context, Depth: depth, RunTimeout: timeout, ArchiveAfter: lim.ArchiveAfter, Deliver: deliver,
		Tools: s.turnTools.Allowed(), Owner: s.turnReach.Owner, Status: messages.SubagentRunning, Created: now}
	childTools := link.Tools
	if depth >= target.Subagents.withDefaults().MaxSpawnDepth { // a leaf is not offered the spawn tools
		childTools = slices.DeleteFunc(slices.Clone(childTools), func(n string) bool { return slices.Contains(subagent.SpawnTools, n) })
	}
	task := subagent.Task(link, now)
	task.Standing.Tools = childTools
	info := persistence.SessionInfo{Key: link.Child, AgentID: agentID, Model: model, Think: a.Thinking, Created: now, Updated: now, Started: now}
	return link, task, info, nil
}

// forkEntries are the parent's recent messages a child with context "fork" starts with: the
// last 20 user and assistant texts (tool calls and results left out).
func (s *Session) forkEntries(mode string) []messages.ChatMessage {
	if mode != "fork" {
		return nil
	}
	var out []messages.ChatMessage
	for _, m := range s.history {
		if (m.Role == messages.RoleUser || m.Role == messages.RoleAssistant) && strings.TrimSpace(m.Content) != "" {
			out = append(out, messages.ChatMessage{Role: m.Role, Content: m.Content, Time: m.Time})
		}
	}
	return out[max(0, len(out)-20):]
}

func (s *Session) onChildSpawned(ctx actor.Context, msg *childSpawned) {
	if msg.by != s {
		msg.call.answer(nil, errors.New("the conversation restarted; spawn again"))
		return
	}
	if msg.err != nil {
		s.subs.children = slices.DeleteFunc(s.subs.children, func(l *subagent.Link) bool { return l.Child == msg.link.Child })
		msg.call.answer(nil, fmt.Errorf("could not record the sub-agent: %w", msg.err))
		return
	}
	ctx.Send(s.router, &startSubagent{key: msg.link.Child})
	s.log.Info().Str("session", s.key).Str("child", msg.link.Child).Str("label", msg.link.Label).Msg("sub-agent spawned")
	s.answerSpawned(msg.call, msg.link)
}

// answerSpawned answers a sessions_spawn call with its child.
func (s *Session) answerSpawned(call *sessionsCall, link *subagent.Link) {
	note := "The sub-agent runs on its own. Its result is push-based: it arrives in this conversation as a completion " +
		"event when it finishes. Do not poll or sleep; call sessions_yield to end your turn and wait, or go on with other work."
	if link.Persistent() {
		note += " It stays after its run (mode session): send it more work with sessions_send or subagents steer; each run " +
			"reports with a completion of its own."
	}
	call.answer(map[string]any{"status": "accepted", "childSessionKey": link.Child, "runId": link.RunID,
		"mode": link.Mode, "note": note}, nil)
}

// spawnCall is Link.Call of a child spawned by the running run's call id: the inbox seq of
// the first message the run answers (the same when it is resumed after a crash) and the id.
func (s *Session) spawnCall(id string) string {
	if id == "" || len(s.answering) == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s", s.answering[0].InboxSeq, id)
}

// childOfCall returns the child the call id spawned before a crash, when the running run
// resumes the run that made the call (its sessions_spawn calls without a result); nil
// otherwise. Call ids are matched only there: some providers number calls per step.
func (s *Session) childOfCall(id string) *subagent.Link {
	key := s.spawnCall(id)
	if key == "" || !s.respawns[id] {
		return nil
	}
	for _, l := range s.subs.children {
		if l.Call == key {
			return l
		}
	}
	return nil
}

// openSpawns returns the ids of the sessions_spawn calls without a result in the entries of
// an interrupted run (its last step's).
func openSpawns(entries []messages.ChatMessage) map[string]bool {
	var open map[string]bool
	for _, m := range entries {
		switch {
		case m.Role == messages.RoleAssistant && len(m.ToolCalls) > 0:
			open = nil
			for _, c := range m.ToolCalls {
				if c.Name == subagent.ToolSpawn {
					if open == nil {
						open = map[string]bool{}
					}
					open[c.ID] = true
				}
			}
		case m.Role == messages.RoleTool:
			delete(open, m.ToolCallID)
		}
	}
	return open
}

// yield lets the run end after this step (Turn.maybeNextStep) when there is something to
// wait for: a running child, or a completion already waiting.
func (s *Session) yield(a *subagent.YieldArgs) (any, error) {
	waiting := slices.ContainsFunc(s.queue.waiting, func(in messages.Inbound) bool { return in.Subagent != nil })
	if s.activeChildren() == 0 && !waiting {
		return nil, errors.New("nothing to wait for: no sub-agent of this session is running; answer the user now")
	}
	return map[string]any{"status": "yielded", "message": a.Message}, nil
}

// onSubagentMarked takes in the gate's status of a child that has not ended: queued while it
// waits for a gateway-wide slot, running once it has one.
func (s *Session) onSubagentMarked(msg *subagentMarked) {
	for _, l := range s.subs.children {
		switch {
		case l.Child != msg.child:
		case !msg.archived.IsZero():
			l.Archived = msg.archived
		case l.Active():
			l.Status = msg.status
		}
	}
}

// queuedChildren counts the children waiting for a gateway-wide slot.
func (s *Session) queuedChildren() int {
	n := 0
	for _, l := range s.subs.children {
		if l.Status == messages.SubagentQueued {
			n++
		}
	}
	return n
}

// activeChildren counts the children still running or waiting to.
func (s *Session) activeChildren() int {
	n := 0
	for _, l := range s.subs.children {
		if s.childActive(l) {
			n++
		}
	}
	return n
}

// activeNote is the "active sub-agents" block of the session's runs while children run.
func (s *Session) activeNote() string {
	var labels []string
	for _, l := range s.subs.children {
		if s.childActive(l) {
			labels = append(labels, l.Name())
		}
	}
	return subagent.ActiveNote(labels)
}

// onSubagentDone takes a child's completion in: the child's status is updated, and a child
// that was stopped is recorded without a run (a /stop or kill already said so). It reports
// whether the completion was handled here.
func (s *Session) onSubagentDone(ctx actor.Context, in *messages.Inbound) bool {
	done := in.Subagent
	for _, l := range s.subs.children {
		if l.Child == done.ChildKey {
			childDone(l, done, in.Time) // subagent_followup.go
		}
	}
	if done.Status != messages.SubagentStopped {
		return false
	}
	s.chargeBudget(&s.info, done.Usage, s.deps.now())
	silent := *in
	silent.Channel = "" // recorded, not announced
	s.answer(ctx, silent, "", nil)
	return true
}

// chargeSubagents adds the tokens of the children whose completions a run answered to the
// session's daily budget (hook in onTurnFinished).
func (s *Session) chargeSubagents(info *persistence.SessionInfo, now time.Time) {
	for _, in := range s.answering {
		if in.Subagent != nil {
			s.chargeBudget(info, in.Subagent.Usage, now)
		}
	}
}

// standingPolicy is the policy of a System event raised by a run: at most that run's tools.
func standingPolicy(a *Agent, st *messages.Standing) tools.Policy {
	known := a.Tools.Names()
	names := slices.DeleteFunc(slices.Clone(st.Tools), func(n string) bool { return !slices.Contains(known, n) })
	if len(names) == 0 { // an empty allow list would mean every tool
		return tools.Policy{}
	}
	p, _ := a.Tools.Policy(names, nil)
	return p
}
