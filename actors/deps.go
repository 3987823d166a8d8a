package actors

import (
	"fmt"
	"sync/atomic"

	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/routing"
	"github.com/reefgw/reef/streaming"
	"github.com/reefgw/reef/tools"
)

// Deps is everything the actor tree needs from the outside, assembled by cmd/reef.
// It is read-only once the Gateway starts; the fields Settings repeats are where the tree
// starts from, and a reload replaces them by a new Settings snapshot (live.go).
type Deps struct {
	Log    zerolog.Logger
	Store  persistence.Store
	Agents []*Agent // the first is the default agent
	// Routes picks the agent of a chat (reef.yaml's bindings); nil: the default agent.
	Routes *routing.Table
	// Channels are the bot accounts to run, by channels.ID ("terminal", "telegram",
	// "telegram:work", ...): one Connector each.
	Channels map[string]channels.Channel
	// Access is enforced per channel account (channels.ID); one without an entry (the
	// terminal) admits everyone who can reach it.
	Access map[string]*access.Rules
	// ToolGrants say which tools guests (everyone but the owner) may use, per channel account
	// (channels.ID); one without an entry gives them tools.GuestTools. The owner gets Agent.Policy.
	ToolGrants map[string]*tools.GuestPolicy
	Session    SessionSettings
	Retry      OutboxRetry // how Connectors retry replies the platform did not take
	// Outages are the providers' circuit breakers: a run that failed on an outage waits for
	// them (session_outage.go). OutageWait bounds that wait (default 60 min); negative, such
	// a run fails at once instead (a piped `reef chat`: its script must learn that it failed).
	Outages    *providers.Breakers
	OutageWait time.Duration
	Now        func() time.Time // default time.Now
	Clock      Clock            // the Timer's clock; default the real one
	// Work, in cluster mode, hands out the cluster's units of work: the Timer fires only on
	// the node that holds TimerWork (timer_cluster.go). Nil: one node.
	Work WorkGate
	// Secrets are the secret values reef holds (API keys, tokens). They are replaced by
	// "[redacted]" in tool results and replies before anything stores or sends them.
	Secrets []string
	// Approvals say when exec asks the owner first (approvals.go); the zero value never asks.
	Approvals ApprovalSettings
	// Events is where runs publish their events (turn_events.go); nil: nowhere.
	Events *events.Bus
	// Processes are exec's background processes (processes.go); nil: none.
	Processes Processes
	// Media says how the files people send are fetched before the run (turn_media.go).
	Media MediaSettings
	// Streaming is how each channel account (channels.ID) shows a run while it goes
	// (connector_live.go); one without an entry gets streaming.Defaults().
	Streaming map[string]streaming.Settings
	// Journals is the directory of the Connectors' draft journals (connector_journal.go),
	// beside the database; "" keeps none.
	Journals string
	// Cluster is this node's share of the sessions in cluster mode (storage_fence.go,
	// router_cluster.go); nil on a single node: every session is this node's, no write fenced.
	Cluster Ownership

	current atomic.Pointer[Settings] // the live settings (live.go)
	gateway *actor.PID               // set by the Gateway like toolRuntime
	// toolRuntime is what tools get as tools.Env.Runtime; the Gateway sets it before it
	// spawns the Router (and so before any Session runs a tool).
	toolRuntime tools.Runtime
	timer       *actor.PID    // set by the Gateway like toolRuntime
	approvals   *actor.PID    // the Approvals actor, set by the Gateway like toolRuntime
	started     time.Time     // when Start was called, for /status
	storage     storageHealth // the Storage actor's state (storage_outage.go)
}

// redactor returns the redactor of the current secrets.
func (d *Deps) redactor() redactor { return d.live().redact }

// Agent is one configured agent, ready to run.
type Agent struct {
	ID        string
	Name      string
	Workspace string // absolute path
	// SystemPrompt is persona text appended to the system prompt after the workspace files
	// (agents[].systemPrompt).
	SystemPrompt string
	// Skills are where skills come from besides the workspace and which the agent may use;
	// nil means the workspace's skills/ only, unchecked.
	Skills        *agent.SkillOptions
	Model         string // "provider/model" label of the primary model
	Provider      providers.Provider
	Tools         *tools.Registry
	Policy        tools.Policy
	ContextWindow int // tokens
	MaxTokens     int
	Vision        bool // the model takes image input
	Limits        Limits
	Compaction    Compaction     // when and how conversations are summarized (turn_compact.go)
	Subagents     SubagentLimits // the sub-agents it spawns (subagent.go)
	Location      *time.Location // time zone for the prompt's clock; default Local
	// Models lists the models /model offers besides Model ("provider/model" labels).
	Models []string
	// ModelFor builds the client for a model a session switched to with /model or /new;
	// nil means the agent runs only Model.
	ModelFor func(label string) (ModelChoice, error)

	cache agentCache
}

// ModelChoice is a model a run uses: the agent's own, or one a session switched to.
type ModelChoice struct {
	Label         string // "provider/model"
	Provider      providers.Provider
	ContextWindow int // tokens
	MaxTokens     int
	Vision        bool // takes image input (configs.Config.SeesImages)
}

// Limits bound one agent run.
type Limits struct {
	MaxToolCalls int           // per run, default 50
	TurnTimeout  time.Duration // wall time of one run, default 10 min
	// The same tool called with the same arguments and getting the same result this often in
	// one run: at LoopWarnAt the result tells the model to change its approach (default 10),
	// at LoopStopAt the run stops and the user is told why (default 20).
	LoopWarnAt  int
	LoopStopAt  int
	ToolTimeout time.Duration // hard stop for one tool call that ignores cancellation, default 31 min
	// DailyTokenBudget, when > 0, replaces SessionSettings.DailyTokenBudget for this agent's sessions.
	DailyTokenBudget int
	// MaxAnswerChars caps one model answer (text, reasoning and tool-call arguments, in
	// characters): past it reef stops reading, keeps the text so far with a note that it was cut
	// and runs none of its tool calls. Default 100,000.
	MaxAnswerChars int
	// StreamTimeout caps the wall time of one model call, however steadily it streams (the idle
	// watchdog only catches silence). Default 10 min.
	StreamTimeout time.Duration
	// MaxReplyChunks caps the messages one reply is split into when sent; the rest is replaced by
	// a note. Default 20.
	MaxReplyChunks int
}

// GuestModels values: what a guest may choose with /model, /new <model> and /think.
const (
	GuestModelsListed = "listed" // the agent's model and models; /think only off, low, default (default)
	GuestModelsNone   = "none"   // nothing: the owner's choices only
)

// SessionSettings shapes conversations.
type SessionSettings struct {
	// GuestModels is what a guest may choose (GuestModelsListed, the default, or GuestModelsNone);
	// the owner chooses freely.
	GuestModels string
	IdleAfter   time.Duration // passivate a session after this long without traffic (default 10 min)
	DMScope     string        // main | per-peer | per-channel-peer | per-account-channel-peer
	MaxInbound  int           // bytes of inbound text accepted (default 32 KiB)
	// Queue says what happens to messages that arrive during a run; QueueByChannel overrides
	// it per channel name, and a session's /queue overrides both.
	Queue          persistence.QueueSettings
	QueueByChannel map[string]persistence.QueueSettings
	RateLimit      RateLimit // per sender and channel; the zero value accepts everything
	// DailyTokenBudget is the input+output tokens one session may use per day (in its agent's
	// time zone), silent, heartbeat and cron runs included; 0 means no budget.
	DailyTokenBudget int
	// GreetOnNew: after /new and /reset the agent greets the user at once, in one model turn
	// (session_greet.go).
	GreetOnNew bool
}

// RateLimit is a token bucket per sender: Messages accepted in a row, earned back evenly over
// Per. A message over the limit is acknowledged and dropped; the sender is told at most once
// a minute. The terminal is exempt.
type RateLimit struct {
	Messages int           // 0 disables the limit
	Per      time.Duration // default 1 min
}

// streaming returns the streaming settings of the channel account name.
func (d *Deps) streaming(name string) streaming.Settings {
	if s, ok := d.live().Streaming[name]; ok {
		return s
	}
	return streaming.Defaults()
}

func (d *Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deps) agent(id string) *Agent {
	for _, a := range d.agents() {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// agentFor is the agent that answers in's chat: the one the channel asked for (in.Agent),
// else the one its binding names, else the default.
func (d *Deps) agentFor(in *messages.Inbound) *Agent {
	if in.Agent != "" {
		if a := d.agent(in.Agent); a != nil {
			return a
		}
	}
	live := d.live()
	if id := live.Routes.Agent(in); id != "" {
		if a := d.agent(id); a != nil {
			return a
		}
	}
	return live.Agents[0]
}

func (l Limits) withDefaults() Limits {
	if l.MaxToolCalls <= 0 {
		l.MaxToolCalls = 50
	}
	if l.TurnTimeout <= 0 {
		l.TurnTimeout = 10 * time.Minute
	}
	if l.LoopWarnAt <= 0 {
		l.LoopWarnAt = 10
	}
	if l.LoopStopAt <= 0 {
		l.LoopStopAt = 20
	}
	if l.ToolTimeout <= 0 {
		l.ToolTimeout = 31 * time.Minute
	}
	if l.MaxAnswerChars <= 0 {
		l.MaxAnswerChars = 100_000
	}
	if l.StreamTimeout <= 0 {
		l.StreamTimeout = 10 * time.Minute
	}
	if l.MaxReplyChunks <= 0 {
		l.MaxReplyChunks = 20
	}
	return l
}

func (s SessionSettings) withDefaults() SessionSettings {
	if s.IdleAfter <= 0 {
		s.IdleAfter = 10 * time.Minute
	}
	if s.DMScope == "" {
		s.DMScope = "per-channel-peer"
	}
	if s.MaxInbound <= 0 {
		s.MaxInbound = 32 << 10
	}
	return s
}

// Queue modes and drop policies (see SessionSettings.Queue).
const (
	QueueSteer     = "steer"     // inject into the running run at its next tool or model boundary
	QueueFollowup  = "followup"  // one run per message, after the current one
	QueueCollect   = "collect"   // one run for all of them, after a quiet window
	QueueInterrupt = "interrupt" // stop the current run and answer the newest
	DropSummarize  = "summarize" // drop the oldest, tell the model what was dropped
	DropOld        = "old"       // drop the oldest
	DropNew        = "new"       // drop the message that does not fit
)

// Defaults of the queue settings.
const (
	DefaultQueueCap      = 20
	DefaultQueueDebounce = 500 * time.Millisecond
)

// queueFor resolves the queue settings of a message on channel: the session's own override,
// then the channel's, then the global one, then the defaults.
func (s SessionSettings) queueFor(channel string, own persistence.QueueSettings) persistence.QueueSettings {
	q := own
	for _, layer := range []persistence.QueueSettings{s.QueueByChannel[channel], s.Queue,
		{Mode: QueueSteer, Debounce: int(DefaultQueueDebounce / time.Millisecond), Cap: DefaultQueueCap, Drop: DropSummarize}} {
		if q.Mode == "" {
			q.Mode = layer.Mode
		}
		if q.Debounce == 0 {
			q.Debounce = layer.Debounce
		}
		if q.Cap == 0 {
			q.Cap = layer.Cap
		}
		if q.Drop == "" {
			q.Drop = layer.Drop
		}
	}
	return q
}

// location is the agent's time zone (Location, or the server's).
func (a *Agent) location() *time.Location {
	if a.Location != nil {
		return a.Location
	}
	return time.Local
}

// model returns the model a session runs: label "" (or the agent's own) is the agent's model.
func (a *Agent) model(label string) (ModelChoice, error) {
	if label == "" || label == a.Model || a.ModelFor == nil {
		if label != "" && label != a.Model {
			return ModelChoice{}, fmt.Errorf("this agent runs only %s", a.Model)
		}
		return ModelChoice{Label: a.Model, Provider: a.Provider, ContextWindow: a.ContextWindow, MaxTokens: a.MaxTokens, Vision: a.Vision}, nil
	}
	return a.ModelFor(label)
}
