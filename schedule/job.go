// Package schedule is the model of reef's scheduled jobs, which the agent-facing `cron` tool
// (package tools/cron) edits: job records, schedules (five-field cron expressions in an IANA
// time zone, fixed intervals, one-shot times), their validation and next-run computation,
// including daylight-saving gaps and overlaps. The Timer actor in package actors stores and
// fires the jobs; the tool reaches it through tools.Runtime.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Job is one scheduled job as stored and as the tool returns it.
type Job struct {
	ID            string   `json:"id"`
	AgentID       string   `json:"agentId"`
	SessionKey    string   `json:"sessionKey"` // the session that created it: the "main" target
	Name          string   `json:"name,omitempty"`
	Schedule      Spec     `json:"schedule"`
	Payload       Payload  `json:"payload"`
	SessionTarget string   `json:"sessionTarget"` // main | isolated
	WakeMode      string   `json:"wakeMode"`      // now | next-heartbeat
	Delivery      Delivery `json:"delivery"`
	Enabled       bool     `json:"enabled"`
	// DeleteAfterRun removes a one-shot job once it ran (default true for kind "at").
	DeleteAfterRun bool  `json:"deleteAfterRun,omitempty"`
	CreatedAtMs    int64 `json:"createdAtMs"`
	UpdatedAtMs    int64 `json:"updatedAtMs"`
	State          State `json:"state"`
}

// Spec says when a job runs.
type Spec struct {
	Kind    string `json:"kind"`              // cron | every | at
	Expr    string `json:"expr,omitempty"`    // kind cron: five fields
	TZ      string `json:"tz,omitempty"`      // kind cron and at: IANA zone, default UTC
	EveryMs int64  `json:"everyMs,omitempty"` // kind every: at least 60000
	At      string `json:"at,omitempty"`      // kind at: RFC 3339, or "2006-01-02T15:04" in TZ
}

// Payload is what a job does when it fires.
type Payload struct {
	Kind    string `json:"kind"`              // systemEvent | agentTurn
	Text    string `json:"text,omitempty"`    // systemEvent
	Message string `json:"message,omitempty"` // agentTurn
}

// Delivery says where the run's reply goes.
type Delivery struct {
	Mode    string `json:"mode"`              // announce (the session's last channel) | channel | none
	Channel string `json:"channel,omitempty"` // mode channel
	To      string `json:"to,omitempty"`      // mode channel: the chat id
}

// State is what the Timer knows about a job's runs.
type State struct {
	NextRunAtMs int64  `json:"nextRunAtMs,omitempty"`
	LastRunAtMs int64  `json:"lastRunAtMs,omitempty"`
	LastStatus  string `json:"lastStatus,omitempty"` // running | ok | error | skipped
	LastError   string `json:"lastError,omitempty"`
}

// Run is one recorded run of a job.
type Run struct {
	JobID      string `json:"jobId"`
	AtMs       int64  `json:"atMs"`
	SessionKey string `json:"sessionKey"`
	Reason     string `json:"reason"` // due | catch-up | manual
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
}

// MinEvery is the shortest interval a job may repeat at.
const MinEvery = time.Minute

// Text is the instruction the job carries, whatever its payload kind.
func (j *Job) Text() string {
	if j.Payload.Kind == "agentTurn" {
		return j.Payload.Message
	}
	return j.Payload.Text
}

// Normalize fills defaults and checks the job; now is used to refuse one-shot times in the past.
func (j *Job) Normalize(now time.Time) error {
	if j.SessionTarget == "" {
		j.SessionTarget = "main"
		if j.Payload.Kind == "agentTurn" {
			j.SessionTarget = "isolated"
		}
	}
	if j.WakeMode == "" {
		j.WakeMode = "now"
	}
	if j.Delivery.Mode == "" {
		j.Delivery.Mode = "announce"
	}
	if len(j.Name) > 200 {
		return errors.New("name is longer than 200 characters")
	}
	if err := j.Schedule.Validate(now); err != nil {
		return err
	}
	switch j.Payload.Kind {
	case "systemEvent", "agentTurn":
	case "":
		return errors.New(`payload.kind is required: "systemEvent" (text) or "agentTurn" (message)`)
	default:
		return fmt.Errorf("payload.kind %q is not systemEvent or agentTurn", j.Payload.Kind)
	}
	if strings.TrimSpace(j.Text()) == "" {
		return errors.New("payload needs text (systemEvent) or message (agentTurn)")
	}
	if len(j.Text()) > 8000 {
		return errors.New("payload text is longer than 8000 characters")
	}
	return j.checkModes()
}

func (j *Job) checkModes() error {
	switch j.SessionTarget {
	case "main", "isolated":
	default:
		return fmt.Errorf("sessionTarget %q is not main or isolated", j.SessionTarget)
	}
	switch j.WakeMode {
	case "now", "next-heartbeat":
	default:
		return fmt.Errorf("wakeMode %q is not now or next-heartbeat", j.WakeMode)
	}
	switch j.Delivery.Mode {
	case "announce", "none":
	case "channel":
		if j.Delivery.Channel == "" || j.Delivery.To == "" {
			return errors.New(`delivery mode "channel" needs channel and to`)
		}
	default:
		return fmt.Errorf("delivery.mode %q is not announce, channel or none", j.Delivery.Mode)
	}
	return nil
}
