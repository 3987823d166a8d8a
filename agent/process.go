package agent

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/reefgw/reef/messages"
)

// Some skills have the model report its progress in fenced blocks tagged openclaw-process,
// one JSON object each:
//
//	```openclaw-process
//	{"type": "step", "id": "fetch", "title": "Fetch the forecast", "status": "running", "progress": 40}
//	```
//
// The object names its kind with "type" (or "kind"): start {goal, context, assumptions, inputs,
// outputs}, step {id, title, status, progress, notes, error}, final {summary, artifacts, next};
// notes and summary are a string or, as OpenClaw writes them, an array of strings;
// {"step": {...}} is read the same way. ParseProcess takes such blocks out of an answer so the
// user never sees them; reef reports them as run events instead.

// ProcessFence is the info string of a progress block's fence.
const ProcessFence = "openclaw-process"

// ProcessBlock is one well-formed progress block; exactly one of its fields is set.
type ProcessBlock struct {
	Start *ProcessStart
	Step  *messages.PlanStep
	Final *ProcessFinal
}

// ProcessStart is a start block: what the run is about.
type ProcessStart struct {
	Goal        string          `json:"goal"`
	Context     json.RawMessage `json:"context,omitempty"`
	Assumptions json.RawMessage `json:"assumptions,omitempty"`
	Inputs      json.RawMessage `json:"inputs,omitempty"`
	Outputs     json.RawMessage `json:"outputs,omitempty"`
}

// ProcessFinal is a final block: how the run ended.
type ProcessFinal struct {
	Summary   string          `json:"summary"`
	Artifacts json.RawMessage `json:"artifacts,omitempty"`
	Next      json.RawMessage `json:"next,omitempty"`
}

// ParseProcess returns text without its well-formed openclaw-process blocks, and those blocks
// in order. A block that is not closed, does not hold one JSON object of a known kind, or
// whose step has neither id nor title stays in the text as it was: never dropped silently.
// Text without blocks is returned unchanged.
func ParseProcess(text string) (clean string, blocks []ProcessBlock) {
	if !strings.Contains(text, "```"+ProcessFence) {
		return text, nil
	}
	var out strings.Builder
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !isProcessFence(lines[i]) {
			out.WriteString(lines[i])
			continue
		}
		end := closingFence(lines, i+1)
		if end < 0 {
			out.WriteString(lines[i])
			continue
		}
		b, ok := parseProcessBlock(strings.Join(lines[i+1:end], ""))
		if !ok {
			for _, l := range lines[i : end+1] {
				out.WriteString(l)
			}
		} else {
			blocks = append(blocks, b)
		}
		i = end
	}
	if len(blocks) == 0 {
		return text, nil
	}
	return tidy(out.String()), blocks
}

func isProcessFence(line string) bool {
	l := strings.TrimSpace(line)
	return l == "```"+ProcessFence
}

// closingFence is the index of the first line from i that closes a fence, or -1.
func closingFence(lines []string, i int) int {
	for ; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "```" {
			return i
		}
	}
	return -1
}

// parseBlock reads a block's JSON object.
func parseProcessBlock(body string) (ProcessBlock, bool) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(body))
	if dec.Decode(&obj) != nil || dec.More() {
		return ProcessBlock{}, false
	}
	raw := []byte(body)
	kind := ""
	for _, k := range []string{"type", "kind"} {
		if v, ok := obj[k]; ok {
			if json.Unmarshal(v, &kind) != nil {
				return ProcessBlock{}, false
			}
			break
		}
	}
	if kind == "" && len(obj) == 1 { // {"step": {...}}
		for k, v := range obj {
			kind, raw = k, bytes.TrimSpace(v)
		}
	}
	var b ProcessBlock
	switch kind {
	case "start":
		b.Start = &ProcessStart{}
		return b, json.Unmarshal(raw, b.Start) == nil
	case "final":
		var f struct {
			ProcessFinal
			Summary textOrList `json:"summary"`
		}
		if json.Unmarshal(raw, &f) != nil {
			return b, false
		}
		f.ProcessFinal.Summary = string(f.Summary)
		b.Final = &f.ProcessFinal
		return b, true
	case "step":
		var s struct {
			ID       json.RawMessage `json:"id"`
			Title    string          `json:"title"`
			Status   string          `json:"status"`
			Progress float64         `json:"progress"`
			Notes    textOrList      `json:"notes"`
			Error    string          `json:"error"`
		}
		if json.Unmarshal(raw, &s) != nil {
			return b, false
		}
		step := messages.PlanStep{ID: idString(s.ID), Title: s.Title, Notes: string(s.Notes), Error: s.Error,
			Progress: clampProgress(s.Progress)}
		status, ok := StepStatus(s.Status)
		if !ok || (step.ID == "" && step.Title == "") {
			return b, false
		}
		step.Status = status
		if step.ID == "" {
			step.ID = step.Title
		}
		b.Step = &step
		return b, true
	}
	return b, false
}

// textOrList is text written as a string or, as OpenClaw writes a step's notes and a final's
// summary, as an array of strings (joined by newlines).
type textOrList string

func (t *textOrList) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		*t = textOrList(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	*t = textOrList(strings.Join(list, "\n"))
	return nil
}

// idString reads an id written as a string or a number.
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// StepStatus normalises a plan step's status: pending, running, done or error, with the
// spellings models tend to use for them; "" is pending. ok is false for anything else.
func StepStatus(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "pending", "todo", "queued":
		return messages.StepPending, true
	case "running", "in_progress", "in-progress", "active", "started":
		return messages.StepRunning, true
	case "done", "completed", "complete", "ok", "success":
		return messages.StepDone, true
	case "error", "failed", "failure":
		return messages.StepError, true
	}
	return "", false
}

func clampProgress(p float64) int {
	return int(min(max(p, 0), 100))
}

// tidy drops the blank lines a removed block leaves behind.
func tidy(s string) string {
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(s)
}
