package subagent

import (
	"errors"
	"fmt"
	"strings"
)

// The names of the session tools.
const (
	ToolSpawn     = "sessions_spawn"
	ToolYield     = "sessions_yield"
	ToolSubagents = "subagents"
	ToolList      = "sessions_list"
	ToolHistory   = "sessions_history"
	ToolSend      = "sessions_send"
)

// SpawnTools are the tools a leaf sub-agent (at the depth cap) is not offered.
var SpawnTools = []string{ToolSpawn, ToolYield}

// SpawnArgs are sessions_spawn's arguments, as OpenClaw names them.
type SpawnArgs struct {
	Task              string `json:"task"`
	Label             string `json:"label,omitempty"`
	AgentID           string `json:"agentId,omitempty"`
	Model             string `json:"model,omitempty"`
	Thinking          string `json:"thinking,omitempty"`
	RunTimeoutSeconds int    `json:"runTimeoutSeconds,omitempty"`
	Mode              string `json:"mode,omitempty"`    // run (default) | session
	Cleanup           string `json:"cleanup,omitempty"` // keep (default) | delete
	Context           string `json:"context,omitempty"` // isolated (default) | fork
	Runtime           string `json:"runtime,omitempty"` // "subagent" (the only one reef has)
	// CallID is the id of the tool call that asks for the child (not the model's to set): the
	// same call run again after a crash finds the child it spawned (Link.Call).
	CallID string `json:"-"`
}

// MaxTask caps a task, in bytes.
const MaxTask = 32 << 10

// Check fills defaults and refuses what cannot be run, saying what to send instead.
func (a *SpawnArgs) Check() error {
	a.Task = strings.TrimSpace(a.Task)
	a.Label = strings.TrimSpace(a.Label)
	switch {
	case a.Task == "":
		return errors.New("task is required: say what the sub-agent should do")
	case len(a.Task) > MaxTask:
		return fmt.Errorf("task is too long (%d KB at most); put the details in a file and name it", MaxTask>>10)
	case len(a.Label) > 64:
		return errors.New("label is too long (64 characters at most)")
	case a.RunTimeoutSeconds < 0:
		return errors.New("runTimeoutSeconds must be 0 (none) or more")
	}
	var err error
	if a.Mode, err = oneOf("mode", a.Mode, "run", "session"); err != nil {
		return err
	}
	if a.Cleanup, err = oneOf("cleanup", a.Cleanup, "keep", "delete"); err != nil {
		return err
	}
	if a.Context, err = oneOf("context", a.Context, "isolated", "fork"); err != nil {
		return err
	}
	if a.Thinking != "" {
		if _, err = oneOf("thinking", a.Thinking, "off", "low", "medium", "high"); err != nil {
			return err
		}
	}
	if a.Runtime != "" && a.Runtime != "subagent" {
		return fmt.Errorf(`runtime %q is not available; use "subagent" or leave it out`, a.Runtime)
	}
	return nil
}

// oneOf returns v, or the first choice when v is empty, or an error naming the choices.
func oneOf(name, v string, choices ...string) (string, error) {
	if v == "" {
		return choices[0], nil
	}
	for _, c := range choices {
		if v == c {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s must be one of %s, not %q", name, strings.Join(choices, ", "), v)
}

// YieldArgs are sessions_yield's.
type YieldArgs struct {
	Message string `json:"message,omitempty"`
}

// SubagentsArgs are the subagents tool's.
type SubagentsArgs struct {
	Action  string `json:"action,omitempty"` // list (default) | kill | steer
	Target  string `json:"target,omitempty"` // label, run id, session key, list number, or "all" (kill)
	Message string `json:"message,omitempty"`
}

// Check fills defaults and refuses incomplete actions.
func (a *SubagentsArgs) Check() error {
	var err error
	if a.Action, err = oneOf("action", a.Action, "list", "kill", "steer"); err != nil {
		return err
	}
	switch {
	case a.Action != "list" && strings.TrimSpace(a.Target) == "":
		return fmt.Errorf("%s needs target: a label, run id, session key or list number (list shows them)", a.Action)
	case a.Action == "steer" && strings.TrimSpace(a.Message) == "":
		return errors.New("steer needs message: what to tell the sub-agent")
	}
	return nil
}

// ListArgs are sessions_list's.
type ListArgs struct {
	Limit int    `json:"limit,omitempty"`
	Kinds string `json:"kinds,omitempty"` // "", subagent, chat
}

// HistoryArgs are sessions_history's.
type HistoryArgs struct {
	SessionKey   string `json:"sessionKey"`
	Limit        int    `json:"limit,omitempty"`
	IncludeTools bool   `json:"includeTools,omitempty"`
}

// SendArgs are sessions_send's.
type SendArgs struct {
	SessionKey     string `json:"sessionKey,omitempty"`
	Label          string `json:"label,omitempty"`
	Message        string `json:"message"`
	TimeoutSeconds *int   `json:"timeoutSeconds,omitempty"` // 0: do not wait; default 60
}

// Check refuses what cannot be sent.
func (a *SendArgs) Check() error {
	switch {
	case strings.TrimSpace(a.Message) == "":
		return errors.New("message is required")
	case len(a.Message) > MaxTask:
		return fmt.Errorf("message is too long (%d KB at most)", MaxTask>>10)
	case a.SessionKey == "" && a.Label == "":
		return errors.New("sessionKey or label is required (sessions_list shows them)")
	case a.TimeoutSeconds != nil && (*a.TimeoutSeconds < 0 || *a.TimeoutSeconds > 600):
		return errors.New("timeoutSeconds must be 0 (do not wait) to 600")
	}
	return nil
}
