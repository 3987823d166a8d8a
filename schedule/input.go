package schedule

import (
	"errors"
	"time"
)

// Args are a cron action's arguments, as the `cron` tool and `reef cron` send them; the
// Timer and Offline decode them.
type Args struct {
	Action string    `json:"action"` // status | list | get | add | update | remove | run | runs
	ID     string    `json:"id,omitempty"`
	Job    *JobInput `json:"job,omitempty"`   // add
	Patch  *JobInput `json:"patch,omitempty"` // update
	Limit  int       `json:"limit,omitempty"` // runs
}

// JobInput is what add sets and update changes (absent fields stay as they are).
type JobInput struct {
	Name           string    `json:"name,omitempty"`
	Schedule       *Spec     `json:"schedule,omitempty"`
	Payload        *Payload  `json:"payload,omitempty"`
	SessionTarget  string    `json:"sessionTarget,omitempty"`
	WakeMode       string    `json:"wakeMode,omitempty"`
	Delivery       *Delivery `json:"delivery,omitempty"`
	Enabled        *bool     `json:"enabled,omitempty"`
	DeleteAfterRun *bool     `json:"deleteAfterRun,omitempty"`
}

// Actions are the cron actions, the values of Args.Action.
var Actions = []string{"status", "list", "get", "add", "update", "remove", "run", "runs"}

// NewJob builds a job from add's input; the caller assigns id and stores it.
func NewJob(in JobInput, id, agentID, sessionKey string, now time.Time) (Job, error) {
	if in.Schedule == nil {
		return Job{}, errors.New("job.schedule is required")
	}
	if in.Payload == nil {
		return Job{}, errors.New("job.payload is required")
	}
	j := Job{ID: id, AgentID: agentID, SessionKey: sessionKey, Enabled: true,
		CreatedAtMs: now.UnixMilli(), UpdatedAtMs: now.UnixMilli()}
	j.DeleteAfterRun = in.Schedule.Kind == "at"
	if err := j.Apply(in, now); err != nil {
		return Job{}, err
	}
	return j, nil
}

// Apply changes the job by p and checks the result.
func (j *Job) Apply(p JobInput, now time.Time) error {
	if p.Name != "" {
		j.Name = p.Name
	}
	if p.Schedule != nil {
		j.Schedule = *p.Schedule
	}
	if p.Payload != nil {
		j.Payload = *p.Payload
	}
	if p.SessionTarget != "" {
		j.SessionTarget = p.SessionTarget
	}
	if p.WakeMode != "" {
		j.WakeMode = p.WakeMode
	}
	if p.Delivery != nil {
		j.Delivery = *p.Delivery
	}
	if p.Enabled != nil {
		j.Enabled = *p.Enabled
	}
	if p.DeleteAfterRun != nil {
		j.DeleteAfterRun = *p.DeleteAfterRun
	}
	j.UpdatedAtMs = now.UnixMilli()
	return j.Normalize(now)
}
