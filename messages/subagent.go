package messages

// Standing is what a System event's run may do; a System event's rights come from who caused
// it, never from the event being reef's own. It has one of two forms:
//
//   - Raised by a run (a sub-agent's task, its completion, an inter-session message, a
//     background process's exit): Caller is "" and Tools lists the tools that run could use.
//     A run answering the event gets no more than that, so a guest's run cannot gain tools by
//     spawning a sub-agent or by being woken by its completion.
//   - Raised by reef for someone (a cron job, a heartbeat, the greeting after /new): Caller
//     is CallerOwner or CallerGuest, and the run gets what that caller may use in the session's
//     chat (the agent's policy for the owner; GuestTools and the grants for a guest).
//
// A System event without a Standing gets a guest's rights: the least privilege.
type Standing struct {
	Tools  []string `json:"tools"`
	Caller string   `json:"caller,omitempty"`
	// Owner, on a Standing raised by a run, is true when that run had the owner's standing:
	// only then does the run answering the event see the owner's private files (MEMORY.md,
	// USER.md, daily notes, the inbox). Events stored by an older reef have it false.
	Owner bool `json:"owner,omitempty"`
}

// Callers of a Standing raised by reef.
const (
	CallerOwner = "owner"
	CallerGuest = "guest"
)

// OwnerStanding is the Standing of an event the owner caused, or that reef raises on the
// owner's behalf in the owner's session (their cron jobs, heartbeats, their greeting).
func OwnerStanding() *Standing { return &Standing{Caller: CallerOwner} }

// GuestStanding is the Standing of an event that runs with a guest's rights (the greeting
// after a guest's /new).
func GuestStanding() *Standing { return &Standing{Caller: CallerGuest} }

// Raised reports whether st is a run's standing (its Tools bound the answering run) rather
// than a caller's.
func (st *Standing) Raised() bool { return st != nil && st.Caller == "" }

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
