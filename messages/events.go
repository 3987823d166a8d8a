package messages

import "time"

// RunEventKind names a run event (see RunEvent).
type RunEventKind string

const (
	RunStart      RunEventKind = "run.start"      // Goal (from an openclaw-process start block)
	RunTextDelta  RunEventKind = "text.delta"     // Text: answer text the model wrote
	RunToolStart  RunEventKind = "tool.start"     // ID, Name, Summary
	RunToolEnd    RunEventKind = "tool.end"       // ID, Name, OK, MS
	RunPlanUpdate RunEventKind = "plan.update"    // Steps, Explanation
	SubagentStart RunEventKind = "subagent.start" // Child (session key), Name (label)
	SubagentEnd   RunEventKind = "subagent.end"   // Child, Status
	ApprovalWait  RunEventKind = "approval.wait"  // ID (call id), Summary (the command)
	RunEnd        RunEventKind = "run.end"        // Status, Tokens, MS, Summary (a final block's)
	// EventsLost is not a run's: the bus tells a subscriber that was too slow how many
	// events it did not get (Lost).
	EventsLost RunEventKind = "events.lost"
)

// Plan step statuses.
const (
	StepPending = "pending"
	StepRunning = "running"
	StepDone    = "done"
	StepError   = "error"
)

// PlanStep is one line of a run's visible plan.
type PlanStep struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`             // StepPending, StepRunning, StepDone or StepError
	Progress int    `json:"progress,omitempty"` // 0-100
	Notes    string `json:"notes,omitempty"`
	Error    string `json:"error,omitempty"`
}

// RunEvent is one thing that happened in an agent run, published for watchers (reef events,
// progress displays). Events are not the record: the transcript is. Seq is the gateway's
// event number, rising in the order events were published (so also within a run); Run is ""
// for events that belong to no run of Session (subagent.end, events.lost).
type RunEvent struct {
	Session string       `json:"session"`
	Run     string       `json:"run"`
	Seq     uint64       `json:"seq"`
	Time    time.Time    `json:"time"`
	Kind    RunEventKind `json:"kind"`

	Goal        string     `json:"goal,omitempty"`
	Text        string     `json:"text,omitempty"`
	ID          string     `json:"id,omitempty"`
	Name        string     `json:"name,omitempty"`
	Summary     string     `json:"summary,omitempty"`
	OK          *bool      `json:"ok,omitempty"`
	MS          int64      `json:"ms,omitempty"`
	Steps       []PlanStep `json:"steps,omitempty"`
	Explanation string     `json:"explanation,omitempty"`
	Child       string     `json:"child,omitempty"`
	Status      string     `json:"status,omitempty"` // run.end: ok | error | cancelled; tool.end: "stopped" with its run; subagent.end: the child's
	Tokens      int        `json:"tokens,omitempty"`
	Lost        uint64     `json:"lost,omitempty"`
}

// ToolEndStopped is the Status of a tool.end event whose call was stopped with its run
// (/stop, Ctrl-C): not ok, and not a failure either.
const ToolEndStopped = "stopped"
