package messages

// Standing is the tool standing of the run that raised an internal event: the tools it could
// use. A run answering the event gets no more than that, so a guest's run cannot gain tools
// by spawning a sub-agent or by being woken by its completion.
type Standing struct {
	Tools []string `json:"tools"`
}

// SubagentDone describes a sub-agent's completion event in its parent's inbox.
type SubagentDone struct {
	ChildKey string `json:"childKey"`
	RunID    string `json:"runId"`
	Label    string `json:"label,omitempty"`
	// Status is completed, failed, timed out or stopped; Why says why a failed run failed.
	Status string `json:"status"`
	Why    string `json:"why,omitempty"`
	Usage  Usage  `json:"usage,omitzero"` // of this run
	// Run numbers the child's runs that ended with a completion (a child of mode session has
	// one per follow-up).
	Run int `json:"run,omitempty"`
	// FollowUps counts the follow-ups its parent had sent the child (mode session) when the
	// run ended, and Pending those of them still waiting for its next run: the child is
	// still working while Pending > 0, or while its parent has sent more than FollowUps.
	FollowUps int `json:"followUps,omitempty"`
	Pending   int `json:"pending,omitempty"`
}

// Sub-agent run statuses.
const (
	SubagentQueued    = "queued"
	SubagentRunning   = "running"
	SubagentCompleted = "completed"
	SubagentFailed    = "failed"
	SubagentTimedOut  = "timed out"
	SubagentStopped   = "stopped"
)
