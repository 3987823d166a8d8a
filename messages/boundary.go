package messages

import "time"

// ChatType is the kind of conversation an Inbound came from.
type ChatType string

const (
	ChatDirect ChatType = "direct"
	ChatGroup  ChatType = "group"
	ChatThread ChatType = "thread" // a thread or forum topic inside a group
)

// Inbound is one message a person sent, normalised by its channel.
type Inbound struct {
	Channel    string    `json:"channel"`           // "telegram", "discord", "feishu", "terminal"
	Account    string    `json:"account,omitempty"` // which configured bot account received it
	ChatID     string    `json:"chatId"`
	ChatType   ChatType  `json:"chatType"`
	ThreadID   string    `json:"threadId,omitempty"`
	SenderID   string    `json:"senderId"`
	SenderName string    `json:"senderName,omitempty"`
	MessageID  string    `json:"messageId,omitempty"` // platform id; with Channel it is the dedup key
	Text       string    `json:"text"`
	ReplyTo    string    `json:"replyTo,omitempty"`     // quoted text of the message replied to (untrusted)
	Mentioned  bool      `json:"mentioned,omitempty"`   // the bot was mentioned or replied to
	Time       time.Time `json:"time,omitzero"`         // platform timestamp
	Attachment []string  `json:"attachments,omitempty"` // workspace-relative paths of downloaded files
	Media      []Media   `json:"media,omitempty"`       // files that came with it (media.go)
	// Agent, set by a channel whose caller picks the agent (the OpenAI-compatible API's model),
	// names the agent that answers; it overrides the bindings. Platforms never set it.
	Agent string `json:"agent,omitempty"`
	// Stateless marks a message whose caller keeps the conversation itself (the API's requests
	// that name no session): it runs in a session of its own (sessionkey.For), on top of
	// Context instead of a stored history, and that session is deleted with its run's record.
	Stateless bool `json:"stateless,omitempty"`
	// Context is the conversation a Stateless message continues, oldest first.
	Context []ChatMessage `json:"context,omitempty"`
	// MaxTokens, when set, caps the output of each model call of the run that answers it
	// (the API's max_tokens) below the model's own limit.
	MaxTokens int `json:"maxTokens,omitempty"`
	// ClientTools are tools the caller runs itself (the API's request tools), offered to the
	// model beside the agent's own: a run whose model calls one ends with the call
	// (TurnEvent.ClientCalls), and the caller's next message brings the result (ToolResults).
	ClientTools *ClientTools `json:"clientTools,omitempty"`
	// Guest marks a caller who is not the owner on a channel whose callers otherwise are (an
	// API key's request, internal/openaiapi): it gets a guest's rights (access.IsOwner).
	Guest bool `json:"guest,omitempty"`
	// ToolResults are the caller's results of the client tool calls a run ended with (role
	// tool, by ToolCallID): the next run continues from them, as if the call had just returned.
	ToolResults []ChatMessage `json:"toolResults,omitempty"`

	// System marks an event reef itself raised (a cron job, a heartbeat), not a person's
	// message: access rules do not apply, and the model sees the text as a system event.
	// Channel and ChatID then name where the run's reply goes ("" = not delivered).
	System bool   `json:"system,omitempty"`
	Source string `json:"source,omitempty"` // for System events: "cron:<jobId>", "heartbeat", "subagent:<key>"
	// Standing is what the run answering a System event may do: the tools of the run that
	// raised it, or the rights of the owner or a guest who caused it (subagent.go). A System
	// event without one gets a guest's rights.
	Standing *Standing `json:"standing,omitempty"`
	// Subagent is set on a sub-agent's completion event.
	Subagent *SubagentDone `json:"subagent,omitempty"`
	// Approval is set on an exec approval's decision for a run of this session decided on
	// another node (cluster mode; approval.go): handed to the waiting call, never run.
	Approval *ApprovalDecided `json:"approval,omitempty"`

	// Set by reef, not by the channel.
	SessionKey string `json:"sessionKey,omitempty"`
	InboxSeq   uint64 `json:"inboxSeq,omitempty"`
}

// Outbound is one reply to deliver to a conversation.
type Outbound struct {
	Channel   string `json:"channel"`
	Account   string `json:"account,omitempty"`
	ChatID    string `json:"chatId"`
	ThreadID  string `json:"threadId,omitempty"`
	ReplyToID string `json:"replyToId,omitempty"` // platform message id this answers
	// Quote asks for a native quoted reply to ReplyToID (a reply directive, the message
	// tool's reply): the reply is sent as a new message, not edited into the run's draft,
	// which cannot become a reply.
	Quote bool   `json:"quote,omitempty"`
	Text  string `json:"text"`
	// Media are files to send with the reply (a MEDIA: line, the message tool's media), each
	// confined to its Root; channels that cannot send files send Text only.
	Media []Media `json:"media,omitempty"`
	// Direct replies are sent as new messages and leave the running reply's draft alone
	// (a /status answer during a run).
	Direct bool `json:"direct,omitempty"`
	// Failed marks the explanation of a failed run (a terminal shows it as an error).
	Failed bool `json:"failed,omitempty"`
	// MaxChunks caps the platform messages Text is split into; past it the rest is replaced by
	// a note. 0 means the channel's default (channels.DefaultMaxChunks).
	MaxChunks int `json:"maxChunks,omitempty"`

	SessionKey string `json:"sessionKey,omitempty"`
	OutboxSeq  uint64 `json:"outboxSeq,omitempty"`
	// Choices are answers the reader may pick (an exec approval's /approve and /deny): a
	// platform with buttons shows one each, and a press comes back as if the person had typed
	// its Text. Text always names them too, for platforms without buttons.
	Choices []Choice `json:"choices,omitempty"`
	// Resent marks a stored reply loaded from the outbox when its Session started (after a
	// restart, a respawn, a move to another node): a reef before may have delivered it
	// already. A channels.OnceSender looks for it on the platform before sending.
	Resent bool `json:"resent,omitempty"`
}

// Choice is an answer a reply offers as a button: Label on it, Text what a press sends.
type Choice struct {
	Label string `json:"label"`
	Text  string `json:"text"`
}

// OutboundSent reports that a Connector is done with an Outbound: it reached the platform,
// was refused for good, or waits in the Connector for the platform to come back (Err set).
type OutboundSent struct {
	SessionKey string
	OutboxSeq  uint64
	PlatformID []string // ids of the platform messages (one per chunk)
	Err        error    // nil when sent; otherwise why not (yet)
}

// TurnEventKind names a progress event.
type TurnEventKind string

const (
	TurnStarted  TurnEventKind = "started"
	ToolStarted  TurnEventKind = "tool_started"
	ToolFinished TurnEventKind = "tool_finished"
	TextDelta    TurnEventKind = "text_delta"
	// TextStreamed: a piece of a model answer as it streams (whole words, redacted, without
	// openclaw-process blocks); StepID numbers the model call, so a new step starts anew.
	TextStreamed TurnEventKind = "text_streamed"
	// PlanUpdated: the run's plan changed (update_plan, openclaw-process steps); Steps is all of it.
	PlanUpdated TurnEventKind = "plan"
	TurnFinal   TurnEventKind = "final"
	// MessageQueued: a message arrived while a run was going and waits by the queue mode
	// (Label says what will happen to it). It belongs to no run.
	MessageQueued TurnEventKind = "queued"
)

// TurnEvent is a progress event of one agent run, for channels that render progress.
type TurnEvent struct {
	SessionKey string
	Channel    string
	Account    string // the bot account of the chat ("" for the platform block's own)
	ChatID     string
	ThreadID   string
	Kind       TurnEventKind
	StepID     string     // stable id of a step (the tool call id)
	Label      string     // short human text: "read list_files.py", "exec: ls -la"
	Text       string     // for TextDelta: the new text; for a failed TurnFinal, why it failed
	IsError    bool       // a tool failed (ToolFinished), or the run failed (TurnFinal)
	Steps      []PlanStep // for PlanUpdated: the whole plan
	// Usage is the tokens of the run a TurnFinal ends (zero for a command or a refusal).
	Usage Usage
	// ClientCalls, on a TurnFinal, are the calls of client tools (Inbound.ClientTools) the run
	// ended with: the caller runs them and sends their results (Inbound.ToolResults).
	ClientCalls []ToolCall
}

// ClientTools are the tools a caller runs itself (Inbound.ClientTools) and how the model may
// call them: OpenAI's tool_choice and parallel_tool_calls.
type ClientTools struct {
	Specs []ToolSpec `json:"specs"`
	// Choice is "auto" (or ""), "none" (not offered), "required" (the run ends with a call of
	// one), or the name of the one tool offered and required.
	Choice string `json:"choice,omitempty"`
	// Serial is parallel_tool_calls: false: at most one client call per run's end.
	Serial bool `json:"serial,omitempty"`
}

// CancelRun asks a session to stop its current run.
type CancelRun struct {
	SessionKey string
}
