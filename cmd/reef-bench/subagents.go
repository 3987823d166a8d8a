package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// The subagents scenario: each chat's message makes its run spawn one sub-agent and yield in
// one model call; the child answers in one call; its completion wakes the parent, which
// answers the user in one more. Three model latencies in a row is the ideal.

// benchSpawnWord in a message makes the fake model delegate it to a sub-agent.
const benchSpawnWord = "use-subagent"

// What a child's task and a completion begin with (package subagent writes them).
const (
	subagentTask       = "[Sub-agent task]"
	subagentCompletion = "[Internal event: a sub-agent finished"
)

// The gateway's config for the scenario: children as many as chats, and the session tools
// granted to the bench's chats (they are guests: allowFrom "*" names no owner).
const (
	subagentAgentYAML = "    subagents: {maxConcurrent: 100000, maxChildren: 5}\n"
	subagentGuestYAML = "    tools: {allow: [sessions_spawn, sessions_yield]}\n"
)

// respondSubagent answers the model calls of the subagents scenario; ok is false for a
// request it does not recognise.
func (r *benchRig) respondSubagent(req fake.Request, delay time.Duration) (reply fake.Reply, ok bool) {
	msgs := req.Messages
	if len(msgs) == 0 {
		return fake.Reply{}, false
	}
	var marks []string
	completed := false
	for _, m := range msgs { // reef's events reach the model as user messages with a header
		switch {
		case m.Role == messages.RoleAssistant && len(m.ToolCalls) == 0:
			marks, completed = nil, false // answered: what follows is a later message's
		case strings.Contains(m.Content, subagentTask):
			r.childRuns.Add(1)
			return fake.Reply{Text: "the child's result", Delay: delay}, true
		case strings.Contains(m.Content, subagentCompletion):
			completed = true
		case m.Role == messages.RoleUser:
			marks = append(marks, benchMarker.FindAllString(m.Content, -1)...)
		}
	}
	last := msgs[len(msgs)-1]
	switch {
	case completed && last.Role != messages.RoleTool:
		return r.answer(marks, delay), true
	case last.Role == messages.RoleUser && strings.Contains(last.Content, benchSpawnWord):
		n := strconv.FormatInt(r.toolCalls.Add(1), 10)
		return fake.Reply{Delay: delay, ToolCalls: []messages.ToolCall{
			{ID: "spawn_" + n, Name: "sessions_spawn", Arguments: `{"task":"collect the facts","label":"worker"}`},
			{ID: "yield_" + n, Name: "sessions_yield", Arguments: `{"message":"waiting for the worker"}`},
		}}, true
	}
	return fake.Reply{}, false
}
