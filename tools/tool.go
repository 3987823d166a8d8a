// Package tools defines what an agent can do: the Tool interface, the registry of built-in tools,
// and the per-agent policy (allow and deny lists with groups) that decides which tools an agent
// is offered at all. Built-in tools live in subpackages (fs, exec, ...).
package tools

import (
	"context"

	"github.com/reefgw/reef/messages"
)

// Tool is one capability offered to the model.
type Tool interface {
	Spec() messages.ToolSpec
	// Run executes one call. A returned error becomes an error tool result whose text is the
	// error's message, so errors must be short, say what to do instead, and hold no secrets.
	// Run must return promptly when ctx is cancelled.
	Run(ctx context.Context, call Call) (Result, error)
}

// Call is one invocation of a tool.
type Call struct {
	ID   string
	Args []byte // the model's raw JSON arguments, possibly malformed: decode with DecodeArgs
	Env  Env
}

// Env is what a call may touch.
type Env struct {
	Workspace  string // absolute path of the agent's workspace; file tools are confined to it
	AgentID    string
	SessionKey string
}

// Result is what the model sees.
type Result struct {
	Content string
	IsError bool
}

// Sync is implemented by tools that only compute in memory and never block. reef runs them
// inside the ToolRun actor instead of a goroutine of their own. A panic there is still
// contained: the ToolRun stops and the call gets an error result.
type Sync interface {
	Tool
	Synchronous()
}
