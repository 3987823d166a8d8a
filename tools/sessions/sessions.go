// Package sessions holds the tools that delegate and talk across sessions: sessions_spawn
// starts a sub-agent, sessions_yield ends the run until its completion arrives, subagents
// lists, stops or steers the run's children, and sessions_list, sessions_history and
// sessions_send reach the gateway's other sessions. The tools check their arguments and hand
// them to the runtime (tools.Sessions), which the actors package implements.
package sessions

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
)

// Tool is one session tool.
type Tool struct {
	name, description, schema string
	args                      func() any      // a fresh argument struct
	check                     func(any) error // nil: nothing to check
}

var _ tools.Tool = Tool{}

// resumable is a session tool whose call, interrupted by a crash, is run again by the run
// that resumes (tools.Resumable): sessions_spawn finds the child it spawned for that call
// (the runtime matches the call id), and sessions_yield only waits again.
type resumable struct{ Tool }

var _ tools.Resumable = resumable{}

func (resumable) Resumable() {}

// Tools returns the six session tools.
func Tools() []tools.Tool {
	return []tools.Tool{
		resumable{Tool{subagent.ToolSpawn, spawnDescription, spawnSchema, func() any { return &subagent.SpawnArgs{} },
			func(a any) error { return a.(*subagent.SpawnArgs).Check() }}},
		resumable{Tool{subagent.ToolYield, yieldDescription, yieldSchema, func() any { return &subagent.YieldArgs{} }, nil}},
		Tool{subagent.ToolSubagents, subagentsDescription, subagentsSchema, func() any { return &subagent.SubagentsArgs{} },
			func(a any) error { return a.(*subagent.SubagentsArgs).Check() }},
		Tool{subagent.ToolList, listDescription, listSchema, func() any { return &subagent.ListArgs{} }, nil},
		Tool{subagent.ToolHistory, historyDescription, historySchema, func() any { return &subagent.HistoryArgs{} },
			func(a any) error {
				if a.(*subagent.HistoryArgs).SessionKey == "" {
					return errors.New("sessionKey is required (sessions_list shows them)")
				}
				return nil
			}},
		Tool{subagent.ToolSend, sendDescription, sendSchema, func() any { return &subagent.SendArgs{} },
			func(a any) error { return a.(*subagent.SendArgs).Check() }},
	}
}

func (t Tool) Spec() messages.ToolSpec {
	return messages.ToolSpec{Name: t.name, Description: t.description, Parameters: json.RawMessage(t.schema)}
}

func (t Tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	a := t.args()
	if err := tools.DecodeArgs(call.Args, a); err != nil {
		return tools.Result{}, err
	}
	if t.check != nil {
		if err := t.check(a); err != nil {
			return tools.Result{}, err
		}
	}
	if spawn, ok := a.(*subagent.SpawnArgs); ok {
		spawn.CallID = call.ID // a repeat after a crash finds the child of this call
	}
	rt, ok := call.Env.Runtime.(tools.Sessions)
	if !ok || call.Env.SessionKey == "" {
		return tools.Result{}, errors.New(t.name + " is not available here (no session runtime)")
	}
	out, err := rt.Sessions(ctx, call.Env, t.name, a)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: string(out)}, nil
}

const spawnDescription = `Start a sub-agent: a separate agent run in a session of its own, with its own tools and ` +
	`transcript, working on task. Answers at once with {status: accepted, childSessionKey, runId}. The result is ` +
	`pushed back to this conversation as a completion event when the sub-agent finishes: do not poll. To wait for it, ` +
	`call sessions_yield (your turn ends; the completion starts your next one).`

const spawnSchema = `{"type":"object","properties":{` +
	`"task":{"type":"string","description":"what the sub-agent should do; it sees only this (and, with context fork, this conversation's recent messages)"},` +
	`"label":{"type":"string","description":"a short name for it, shown in lists and in its completion"},` +
	`"agentId":{"type":"string","description":"run another configured agent (if this agent may)"},` +
	`"model":{"type":"string","description":"provider/model to use instead of the agent's"},` +
	`"thinking":{"type":"string","enum":["off","low","medium","high"]},` +
	`"runTimeoutSeconds":{"type":"integer","minimum":0,"description":"stop it after this long (0 = the configured limit)"},` +
	`"mode":{"type":"string","enum":["run","session"],"description":"run: one task (default); session: it keeps its session for sessions_send"},` +
	`"cleanup":{"type":"string","enum":["keep","delete"],"description":"delete: remove its transcript once its result is in"},` +
	`"context":{"type":"string","enum":["isolated","fork"],"description":"fork: start it with a copy of this conversation's recent messages"},` +
	`"runtime":{"type":"string","enum":["subagent"]}},"required":["task"]}`

const yieldDescription = `End your turn now and wait for your sub-agents: the next completion event starts your next turn. ` +
	`message is a note for the record; the user is not sent it.`

const yieldSchema = `{"type":"object","properties":{"message":{"type":"string","description":"what you are waiting for"}}}`

const subagentsDescription = `List, stop or steer the sub-agents this session spawned. target is a label, run id, ` +
	`session key or the number list shows; kill also takes "all".`

const subagentsSchema = `{"type":"object","properties":{"action":{"type":"string","enum":["list","kill","steer"]},` +
	`"target":{"type":"string"},"message":{"type":"string","description":"for steer: what to tell it"}}}`

const listDescription = `List the sessions of this gateway: conversations and sub-agents, newest first, with their keys.`

const listSchema = `{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":200},` +
	`"kinds":{"type":"string","enum":["subagent","chat"]}}}`

const historyDescription = `Read the recent transcript of another session of this gateway (sessions_list shows the keys).`

const historySchema = `{"type":"object","properties":{"sessionKey":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":200},` +
	`"includeTools":{"type":"boolean","description":"also show tool calls and results"}},"required":["sessionKey"]}`

const sendDescription = `Send a message to another session of this gateway (by sessionKey, or a sub-agent's label). ` +
	`Its agent sees it as a message from this session, not from its user. timeoutSeconds 0 sends and returns at ` +
	`once; otherwise the call waits up to that long (default 60) for the reply.`

const sendSchema = `{"type":"object","properties":{"sessionKey":{"type":"string"},"label":{"type":"string"},` +
	`"message":{"type":"string"},"timeoutSeconds":{"type":"integer","minimum":0,"maximum":600}},"required":["message"]}`
