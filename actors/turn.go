package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/tools"
)

// Turn is one agent run: it streams the model's answer, runs each tool call in its own
// ToolRun (calls of one answer run concurrently), appends the results and loops until the
// model answers without tool calls or a limit stops it. It reports one turnFinished to its
// Session and stops. Every tool call it records has exactly one result.
type Turn struct {
	in     *turnInput
	limits Limits
	log    zerolog.Logger

	runCtx context.Context
	cancel context.CancelFunc
	timer  *time.Timer

	msgs      []messages.ChatMessage // entries this run produced, in order
	usage     messages.Usage
	step      int                 // LLM calls made; stale results carry an older step
	pending   []messages.ToolCall // calls of the current step
	results   map[string]*messages.ChatMessage
	outside   map[string]bool   // calls of the step whose result content came from the tool
	started   map[string]bool   // calls of the step checked and run (a sessions_yield waits for the others)
	runs      map[string]runRef // ToolRun pid id → its call
	toolCount int
	repeats   map[string]int
	stopErr   error // set when a limit ends the run after this step
	done      bool

	steer    []messages.Inbound // messages sent during the run, injected at its next boundary
	injected []messages.Inbound // steered messages the run took in, in order
	cmp      turnCompact        // context compaction and memory flush (turn_compact.go)

	recorded int // len(msgs) at the last started record (turn_started.go)
	records  int // started records this run wrote

	deadline     time.Time         // when the run times out, unless paused
	timeLeft     time.Duration     // of the run's time, while paused
	awaiting     map[string]string // calls waiting for the owner's approval: call id → request id
	resumedCalls map[string]bool   // calls a restart interrupted while they waited for approval

	evs runEvents // the run's published events (turn_events.go)

	userChanged bool // in.user was replaced by the entries with their files (turn_media.go)

	callText    string              // the text the model wrote with the step's calls: a parked run's reply
	clientCalls []messages.ToolCall // the client calls the run parked with (turn_client.go)
	nudged      bool                // asked the model again for a required client call
}

// turnInput is everything a Turn needs, copied by the Session.
type turnInput struct {
	seq        uint64
	epoch      int64 // the Session's lease epoch in cluster mode (storeWrite.Epoch)
	agent      *Agent
	deps       *Deps
	sessionKey string
	channel    string
	chatType   string
	history    []messages.ChatMessage
	user       []messages.ChatMessage
	tools      tools.Policy // what the run may use: offered to the model, and the only tools it may call
	reach      tools.Reach  // what of the workspace its tools may name; its own uploads are added as fetched
	senderID   string       // who the run answers, for a refused tool's message
	senderName string       // and for an approval request: their name, chat, and whether it is the owner
	chatID     string
	owner      bool
	model      ModelChoice
	reasoning  string             // providers.Request.Reasoning ("" = provider default)
	priority   providers.Priority // of the run's model calls: background for heartbeats, cron, sub-agents
	compact    compactInput

	storage *actor.PID             // where the run records its tool calls as started; nil: not recorded
	resume  []messages.ChatMessage // entries of the run a crash interrupted, to start from (turn_started.go)
	resumeN int                    // how many started records hold them
	// awaiting are the calls of resume that waited for the owner's approval (turn_approval.go):
	// they never ran, so they wait again instead of being answered as interrupted.
	awaiting map[string]bool
	timeout  time.Duration // a sub-agent's run timeout, when shorter than Limits.TurnTimeout

	client *messages.ClientTools // the caller's own tools (turn_client.go); nil: none
}

// Turn messages.
type (
	turnFinished struct {
		seq       uint64
		msgs      []messages.ChatMessage
		reply     string
		usage     messages.Usage
		err       error
		cancelled bool
		injected  []messages.Inbound     // steered messages answered by this run
		user      []messages.ChatMessage // the run's user entries when it changed them (turn_media.go); nil: unchanged

		compaction compactionReport // what the run did to the context (turn_compact.go)
		// clientCalls are the client tool calls the run parked with, waiting for the caller
		// (turn_client.go); they have no result in msgs.
		clientCalls []messages.ToolCall
	}
	// steerMessage is a message sent while the run is active, in steer mode.
	steerMessage struct{ in messages.Inbound }
	cancelTurn   struct{}
	turnTimeout  struct{}
	llmDone      struct {
		step  int
		msg   messages.ChatMessage
		usage messages.Usage
		err   error

		overBudget bool // not sent: the request was over the compaction limit (turn_compact.go)
		fixed      int  // estimated tokens of the system prompt and tool specs
	}
	toolDone struct {
		step    int
		callID  string
		result  messages.ChatMessage
		outside bool        // the content is the tool's: wrapped as untrusted data
		plan    *tools.Plan // a plan the tool reported, published as plan.update
	}
)

var (
	errTurnTimeout = errors.New("run timed out")
	errToolLimit   = errors.New("tool limit reached")
)

// TurnProps is the recipe for a Turn. Its ToolRuns are stopped, never restarted, when they fail.
func TurnProps(in *turnInput) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		limits := in.agent.Limits.withDefaults()
		if in.timeout > 0 && in.timeout < limits.TurnTimeout {
			limits.TurnTimeout = in.timeout
		}
		return &Turn{in: in, limits: limits, log: in.deps.Log}
	},
		actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(in.deps.Log)),
		actor.WithSupervisor(actor.NewOneForOneStrategy(0, 0, stopDecider)))
}

func (t *Turn) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		t.onStarted(ctx)
	case *llmDone:
		t.onLLMDone(ctx, msg)
	case *toolDone:
		t.onToolDone(ctx, msg)
	case *actor.Terminated:
		t.onToolRunTerminated(ctx, msg)
	case *toolLost:
		t.onToolLost(ctx, msg)
	case *approvalWaiting:
		t.onApprovalWaiting(ctx, msg)
	case *approvalEnded:
		t.onApprovalEnded(ctx, msg)
	case *steerMessage:
		t.steer = append(t.steer, msg.in)
	case *startedRecorded:
		t.onStartedRecorded(ctx, msg)
	case *compactDone:
		t.onCompactDone(ctx, msg)
	case *mediaFetched:
		t.onMediaFetched(ctx, msg)
	case *cancelTurn:
		t.finish(ctx, "", context.Canceled)
	case *turnTimeout:
		t.finish(ctx, "", fmt.Errorf("%w after %s", errTurnTimeout, t.limits.TurnTimeout))
	case *actor.Stopping:
		t.onStopping()
	}
}

func (t *Turn) onStarted(ctx actor.Context) {
	t.runCtx, t.cancel = context.WithCancel(providers.WithPriority(context.Background(), t.in.priority))
	t.results, t.runs, t.repeats = map[string]*messages.ChatMessage{}, map[string]runRef{}, map[string]int{}
	t.outside = map[string]bool{}
	t.started = map[string]bool{}
	t.armTimeout(ctx, t.limits.TurnTimeout)
	t.event(ctx, messages.TurnStarted, "", "", false)
	t.publish(messages.RunEvent{Kind: messages.RunStart})
	t.begin(ctx)
}

// begin starts the run: a manual compaction, or the first LLM call.
func (t *Turn) begin(ctx actor.Context) {
	c := &t.cmp
	if h := t.in.history; t.in.compact.hasSummary && len(h) > 0 {
		c.summary, _ = agent.SummaryOf(h[0])
		c.summaryAt, c.covered = h[0].Time, 1
	}
	if t.in.compact.manual {
		t.startSummary(ctx, false)
		return
	}
	if t.fetchMedia(ctx) { // files first; begin runs again on mediaFetched (turn_media.go)
		return
	}
	if t.resume(ctx) {
		return
	}
	t.startLLM(ctx)
}

// finish reports the run to the Session exactly once and stops the Turn. Calls still
// running get an error result so that every call keeps exactly one result.
func (t *Turn) finish(ctx actor.Context, reply string, err error) {
	if t.done {
		return
	}
	t.done = true
	t.stop()
	t.withdrawApprovals(ctx)
	if len(t.pending) > 0 {
		reason := "not run: the run was stopped"
		if err != nil && !errors.Is(err, context.Canceled) {
			reason = "not finished: " + err.Error()
		}
		for _, c := range t.pending {
			if t.results[c.ID] == nil {
				r := toolResult(c, reason, true)
				t.results[c.ID] = &r
				if _, started := t.evs.tools[c.ID]; started && errors.Is(err, context.Canceled) {
					t.toolStopped(c) // stopped with the run (Ctrl-C, /stop): not a failure
				} else if started {
					t.toolEnded(c, false)
				}
			}
		}
		t.appendResults()
	}
	t.dropFlush()
	t.runEnded(err) // after the memory flush is dropped: the flush is silent, the run's end is not
	var user []messages.ChatMessage
	if t.userChanged {
		user = t.in.user
	}
	ctx.Send(ctx.Parent(), &turnFinished{seq: t.in.seq, msgs: t.msgs, reply: reply, usage: t.usage,
		err: err, cancelled: errors.Is(err, context.Canceled), injected: t.injected, user: user,
		compaction: t.compactionReport(), clientCalls: t.clientCalls})
	ctx.Stop(ctx.Self())
}

// onStopping ends a run stopped from outside (its Session stopped) without finish.
func (t *Turn) onStopping() {
	if !t.done {
		t.cmp.flushing = false
		t.runEnded(context.Canceled)
	}
	t.stop()
}

func (t *Turn) stop() {
	if t.cancel != nil {
		t.cancel()
	}
	if t.timer != nil {
		t.timer.Stop()
	}
}

func (t *Turn) event(ctx actor.Context, kind messages.TurnEventKind, step, label string, isErr bool) {
	if t.cmp.flushing {
		return // the memory flush is silent
	}
	ctx.Send(ctx.Parent(), &messages.TurnEvent{SessionKey: t.in.sessionKey, Kind: kind, StepID: step, Label: label, IsError: isErr})
}
