// Package plan is the update_plan tool: the model keeps a visible checklist of its run. Each
// call replaces the run's plan; reef publishes it as a plan.update run event (reef events,
// progress displays). It changes nothing on the machine, so guests get it by default; an
// agent's tool policy can deny it.
package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Limits of one plan.
const (
	MaxSteps     = 50
	MaxTitle     = 200 // characters
	MaxNotes     = 500
	MaxIDChars   = 64
	MaxExplained = 500
)

// Tool is update_plan.
type Tool struct{}

var (
	_ tools.Sync       = Tool{}
	_ tools.Idempotent = Tool{}
)

// New returns the update_plan tool.
func New() Tool { return Tool{} }

func (Tool) Synchronous() {}
func (Tool) Idempotent()  {}

func (Tool) Spec() messages.ToolSpec {
	return messages.ToolSpec{Name: "update_plan", Description: description, Parameters: json.RawMessage(schema)}
}

type step struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Progress *float64 `json:"progress"`
	Notes    string   `json:"notes"`
}

type args struct {
	Steps       []step `json:"steps"`
	Explanation string `json:"explanation"`
}

func (Tool) Run(_ context.Context, call tools.Call) (tools.Result, error) {
	var a args
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := validate(a)
	if err != nil {
		return tools.Result{}, err
	}
	count := map[string]int{}
	for _, s := range p.Steps {
		count[s.Status]++
	}
	return tools.Result{Plan: p, Content: fmt.Sprintf("plan updated: %d steps (%d done, %d running, %d pending, %d error)",
		len(p.Steps), count[messages.StepDone], count[messages.StepRunning], count[messages.StepPending], count[messages.StepError])}, nil
}

// validate checks a call's plan and returns it as reef reports it.
func validate(a args) (*tools.Plan, error) {
	switch {
	case len(a.Steps) == 0:
		return nil, errors.New("steps is required: the whole plan, one entry per step")
	case len(a.Steps) > MaxSteps:
		return nil, fmt.Errorf("too many steps (%d at most); group small steps together", MaxSteps)
	case utf8.RuneCountInString(a.Explanation) > MaxExplained:
		return nil, fmt.Errorf("explanation is too long (%d characters at most)", MaxExplained)
	}
	p := &tools.Plan{Explanation: strings.TrimSpace(a.Explanation)}
	seen := map[string]bool{}
	for i, s := range a.Steps {
		s.ID, s.Title = strings.TrimSpace(s.ID), strings.TrimSpace(s.Title)
		switch {
		case s.ID == "" || s.Title == "":
			return nil, fmt.Errorf("step %d: id and title are required", i+1)
		case utf8.RuneCountInString(s.ID) > MaxIDChars, utf8.RuneCountInString(s.Title) > MaxTitle, utf8.RuneCountInString(s.Notes) > MaxNotes:
			return nil, fmt.Errorf("step %d: too long (id %d, title %d, notes %d characters at most)", i+1, MaxIDChars, MaxTitle, MaxNotes)
		case seen[s.ID]:
			return nil, fmt.Errorf("step %d: id %q is used twice; ids must be unique and stable", i+1, s.ID)
		}
		seen[s.ID] = true
		status, ok := statuses[s.Status]
		if !ok {
			return nil, fmt.Errorf("step %d: status %q is not one of pending, running, done, error", i+1, s.Status)
		}
		ps := messages.PlanStep{ID: s.ID, Title: s.Title, Status: status, Notes: strings.TrimSpace(s.Notes)}
		if s.Progress != nil {
			if *s.Progress < 0 || *s.Progress > 100 {
				return nil, fmt.Errorf("step %d: progress must be between 0 and 100", i+1)
			}
			ps.Progress = int(*s.Progress)
		}
		p.Steps = append(p.Steps, ps)
	}
	return p, nil
}

var statuses = map[string]string{"": messages.StepPending, messages.StepPending: messages.StepPending,
	messages.StepRunning: messages.StepRunning, messages.StepDone: messages.StepDone, messages.StepError: messages.StepError}

const description = `Keep a visible checklist of your work on a task of several steps: send the whole plan each ` +
	`time (stable ids), marking steps pending, running, done or error as you go. The user sees it as progress ` +
	`while you work; it is not sent as a message. Skip it for quick answers.`

const schema = `{"type":"object","properties":{` +
	`"steps":{"type":"array","maxItems":50,"items":{"type":"object","properties":{` +
	`"id":{"type":"string","description":"stable id of the step"},` +
	`"title":{"type":"string","description":"what the step does, short"},` +
	`"status":{"type":"string","enum":["pending","running","done","error"]},` +
	`"progress":{"type":"number","minimum":0,"maximum":100},` +
	`"notes":{"type":"string"}},"required":["id","title","status"]}},` +
	`"explanation":{"type":"string","description":"why the plan changed, if it did"}},"required":["steps"]}`
