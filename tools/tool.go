// Package tools defines what an agent can do: the Tool interface, the registry of built-in tools,
// and the per-agent policy (allow and deny lists with groups) that decides which tools an agent
// is offered at all. Built-in tools live in subpackages (fs, exec, ...).
package tools

import (
	"context"
	"encoding/json"

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
	// Channel and SenderID name who the run answers ("telegram", "42"). Who may use which
	// tool is decided before a call reaches the tool (GuestPolicy), not by the tool.
	Channel, SenderID string
	// Tools are the tools the calling run may use; what a call leaves behind (a background
	// process) raises events whose runs get no more than these.
	Tools []string
	// Reach is the part of the workspace the run may name (read, ls, the message tool's
	// media): all of it with the owner's standing, less the owner's private files otherwise.
	Reach Reach
	// Runtime lets tools act on reef itself; nil where no runtime is available.
	Runtime Runtime
}

// Runtime is what tools that act on reef itself may use. The actors package implements it.
type Runtime interface {
	// Cron performs one action of the cron tool (status, list, get, add, update, remove, run,
	// runs) for the calling agent and session. args and the result are the tool's JSON.
	Cron(ctx context.Context, agentID, sessionKey, action string, args json.RawMessage) (json.RawMessage, error)
	// Message sends text to the conversation of sessionKey now, while the run goes on, and
	// returns once the message is recorded for delivery.
	Message(ctx context.Context, sessionKey, text string) error
}

// MessageRequest is one send of the message tool in OpenClaw's shape.
type MessageRequest struct {
	Text string
	// Target names another chat of the channel the run answers on: its chat id, or the key of
	// a session there. "" is the run's own conversation.
	Target string
	// ReplyTo is the message id to quote natively; Reply without it quotes the message the
	// run answers.
	ReplyTo string
	Reply   bool
	// React sets Emoji as the bot's reaction on MessageID ("" = the message the run answers)
	// instead of sending Text.
	React     bool
	Emoji     string
	MessageID string
	// Media are files to send with Text (or alone): workspace paths or https URLs, checked
	// by the tool; the runtime confines them to the workspace again when it sends them.
	Media []string
	// Edit replaces the text of MessageID ("" = the last message the bot sent in this
	// conversation) with Text; Delete removes that message. Both act only on messages reef
	// sent in this conversation.
	Edit   bool
	Delete bool
}

// MessageResult is what a message tool request did: the platform ids of the messages it sent
// or edited, when the platform reported them in time.
type MessageResult struct {
	MessageIDs []string
}

// Messenger is implemented by runtimes that send the message tool's requests beyond plain
// text to the run's own conversation. Sending to another chat needs the rights of
// sessions_send (owner-only by default); the runtime checks them.
type Messenger interface {
	SendMessage(ctx context.Context, sessionKey string, req MessageRequest) (MessageResult, error)
}

// Result is what the model sees.
type Result struct {
	Content string
	IsError bool
	// Plan, when set, is a plan the tool reports (update_plan): the run publishes it as a
	// plan.update event for watchers. The model sees only Content.
	Plan *Plan
}

// Plan is a run's visible checklist, as a tool reports it.
type Plan struct {
	Steps       []messages.PlanStep
	Explanation string
}

// Sync is implemented by tools that only compute in memory and never block. reef runs them
// inside the ToolRun actor instead of a goroutine of their own. A panic there is still
// contained: the ToolRun stops and the call gets an error result.
type Sync interface {
	Tool
	Synchronous()
}

// Live is implemented by tools whose spec may change, or that may stop being offered, while
// reef runs (an MCP server's tools after its notifications/tools/list_changed). The registry
// offers one to the model only while Offered reports true (a call made anyway gets the tool's
// own error), and Generation grows with every change, so cached tool lists are rebuilt.
type Live interface {
	Tool
	Offered() bool
	Generation() uint64
}

// Idempotent is implemented by tools whose calls are safe to repeat: they change nothing
// outside reef (read, ls). After a crash, reef runs an interrupted call of such a tool again;
// a call of any other tool is not repeated, and the model is told it was interrupted.
type Idempotent interface {
	Tool
	Idempotent()
}

// Resumable is implemented by tools whose calls change something, yet may be run again after
// a crash: a repeat of the same call (the same Call.ID, in the run the crash interrupted)
// finds what the first one did instead of doing it twice (sessions_spawn finds the child
// spawned for that call). Their calls are recorded as started like any other tool's that is
// not Idempotent; after a crash an interrupted one is run again, not answered "interrupted".
type Resumable interface {
	Tool
	Resumable()
}
