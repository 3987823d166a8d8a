// Package streaming is what a run's draft shows while the agent works, by the streaming mode
// a channel account is configured with: nothing (off), the answer as it streams (partial),
// the answer in larger pieces (block), or a label with compact progress lines: the plan and
// the tool calls (progress). It is pure: the Connector feeds a Draft the run's TurnEvents and
// edits the platform's message into what Render returns, paced by the platform's EditLimits.
package streaming

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
)

// Mode is how a channel account shows a run while it goes.
type Mode string

const (
	Off      Mode = "off"      // only the final answer (and typing where the platform has it)
	Partial  Mode = "partial"  // one draft edited with the answer's text as it streams
	Block    Mode = "block"    // the same in paragraphs or BlockMinChars pieces
	Progress Mode = "progress" // one draft with a label and compact progress lines
)

// Modes are the valid modes, for validation and help.
var Modes = []Mode{Off, Partial, Block, Progress}

// LabelAuto picks the label from Labels (or a built-in pool) by the run.
const LabelAuto = "auto"

// pool is what LabelAuto picks from when Labels is empty.
var pool = []string{"Working", "Thinking", "On it", "Looking into it", "Digging in", "Figuring it out"}

// Settings are one channel account's streaming settings.
type Settings struct {
	Mode         Mode
	Label        string   // LabelAuto, "" (no label) or the label itself
	Labels       []string // LabelAuto's pool; empty: a built-in one
	MaxLines     int      // progress lines shown at most (the label not counted)
	MaxLineChars int      // a line is cut at this many characters
	// ToolProgress: a line per tool call (else the plan only). With neither a label nor
	// tool lines the draft shows no plan either, as OpenClaw hides tool and task lines then:
	// only "…".
	ToolProgress bool
	// StartDelay: a run is shown (draft, typing) only once it has gone on this long, so a
	// quick answer never shows a draft.
	StartDelay    time.Duration
	BlockMinChars int // block mode: a piece is shown once a paragraph ends or it is this long
}

// Defaults are the settings of a channel account that sets none.
func Defaults() Settings {
	return Settings{Mode: Progress, Label: LabelAuto, MaxLines: 8, MaxLineChars: 120, ToolProgress: true,
		StartDelay: 500 * time.Millisecond, BlockMinChars: 800}
}

// maxRunes caps what a draft shows: the smallest platform limit (Discord's 2000) with room.
const maxRunes = 1900

// placeholder is a draft with nothing to show yet.
const placeholder = "…"

// Draft is what one run's draft shows. It is not safe for concurrent use.
type Draft struct {
	s     Settings
	clean func(string) string
	label string
	tools []toolLine
	plan  []messages.PlanStep
	step  string // of the answer text being streamed
	text  strings.Builder
	done  bool // the step's text is complete: a tool call started after it
}

type toolLine struct {
	id, text string
	state    byte // 'r' running, 'o' ok, 'e' error
}

// New returns the draft of a run. seed picks an automatic label (the session key: the same
// chat keeps its word); clean, if not nil, makes streamed text fit to show (takes out reply
// directives).
func New(s Settings, seed string, clean func(string) string) *Draft {
	d := &Draft{s: s, clean: clean}
	switch s.Label {
	case "":
	case LabelAuto:
		words := s.Labels
		if len(words) == 0 {
			words = pool
		}
		h := fnv.New32a()
		h.Write([]byte(seed))
		d.label = words[h.Sum32()%uint32(len(words))]
	default:
		d.label = s.Label
	}
	return d
}

// Apply takes a run's event and reports whether the draft may show something else now.
func (d *Draft) Apply(ev messages.TurnEvent) bool {
	switch ev.Kind {
	case messages.ToolStarted:
		d.tools = append(d.tools, toolLine{id: ev.StepID, text: ev.Label, state: 'r'})
		if d.s.Mode == Partial || d.s.Mode == Block {
			// the model wrote its text before the call: its last word may show now
			changed := !d.done && d.text.Len() > 0
			d.done = true
			return changed
		}
		return d.s.Mode == Progress && d.s.ToolProgress
	case messages.ToolFinished:
		for i := range d.tools {
			if d.tools[i].id == ev.StepID && d.tools[i].state == 'r' {
				d.tools[i].state = 'o'
				if ev.IsError {
					d.tools[i].state = 'e'
				}
				return d.s.Mode == Progress && d.s.ToolProgress
			}
		}
	case messages.PlanUpdated:
		d.plan = append(d.plan[:0], ev.Steps...)
		return d.s.Mode == Progress && d.showsPlan()
	case messages.TextStreamed:
		if ev.StepID != d.step {
			d.step = ev.StepID
			d.text.Reset()
		}
		d.text.WriteString(ev.Text)
		d.done = false
		return d.s.Mode == Partial || d.s.Mode == Block
	}
	return false
}

// Render is the draft's text now: never empty ("…" when there is nothing to show yet).
func (d *Draft) Render() string {
	var out string
	switch d.s.Mode {
	case Progress:
		out = d.progress()
	case Partial:
		text := d.text.String()
		if !d.done {
			text = text[:WordEnd(text)]
		}
		out = d.answer(text, !d.done && !strings.HasSuffix(text, "\n"))
	case Block:
		text := d.text.String()
		cut := len(text)
		if !d.done {
			cut = blockCut(text, d.s.BlockMinChars)
		}
		out = d.answer(text[:cut], cut < len(text) && text[cut] != '\n')
	}
	if strings.TrimSpace(out) == "" {
		return placeholder
	}
	return out
}

// answer is the answer's text as a draft shows it; open says its last line is still being
// written. It is cut (at a word end) to maxRunes characters and made safe to render
// (words.go).
func (d *Draft) answer(text string, open bool) string {
	if d.clean != nil {
		text = d.clean(text)
	}
	text = trimPartialRune(text)
	cut := false
	if utf8.RuneCountInString(text) > maxRunes-1 {
		r := []rune(text)
		text = string(r[:clusterCut(r, maxRunes-1)])
		if end := WordEnd(text); end > len(text)/2 { // else no word end near: a URL, data
			text = text[:end]
		}
		open, cut = true, true
	}
	text = strings.TrimRight(safeMarkdown(text, open), " \n")
	if cut {
		if strings.HasSuffix(text, "```") {
			text += "\n"
		}
		text += placeholder
	}
	return text
}

// blockCut is where a block draft's text ends: at the last paragraph end, or, when minChars
// more characters have come since, at the last line or word end.
func blockCut(text string, minChars int) int {
	cut := strings.LastIndex(text, "\n\n")
	if cut < 0 {
		cut = 0
	}
	if minChars > 0 && utf8.RuneCountInString(text[cut:]) >= minChars {
		if end := WordEnd(text); end > cut {
			cut = end
		}
	}
	return cut
}

// progress is the label and the last MaxLines lines: the plan first, then the tool calls.
func (d *Draft) progress() string {
	var plan, tools []string
	for _, s := range d.plan {
		if d.showsPlan() {
			plan = append(plan, d.line(planLine(s)))
		}
	}
	if d.s.ToolProgress {
		for _, t := range d.tools {
			mark := map[byte]string{'r': "▸ ", 'o': "✓ ", 'e': "✗ "}[t.state]
			tools = append(tools, d.line(mark+t.text))
		}
	}
	maxLines := d.s.MaxLines
	if maxLines <= 0 {
		maxLines = 8
	}
	switch {
	case len(plan) >= maxLines:
		plan, tools = plan[:maxLines], nil
	case len(plan)+len(tools) > maxLines:
		tools = tools[len(tools)-(maxLines-len(plan)):]
	}
	var b strings.Builder
	if d.label != "" {
		b.WriteString(d.label + placeholder)
	}
	for _, l := range append(plan, tools...) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// showsPlan reports whether the draft shows the plan's steps: not when it has neither a
// label nor tool lines (OpenClaw's label: false with toolProgress: false shows no task lines).
func (d *Draft) showsPlan() bool { return d.label != "" || d.s.ToolProgress }

func planLine(s messages.PlanStep) string {
	mark := map[string]string{messages.StepRunning: "[~] ", messages.StepDone: "[x] ", messages.StepError: "[!] "}[s.Status]
	if mark == "" {
		mark = "[ ] "
	}
	line := mark + s.Title
	if s.Status == messages.StepRunning && s.Progress > 0 && s.Progress < 100 {
		line += fmt.Sprintf(" %d%%", s.Progress)
	}
	return line
}

// line folds s onto one line without control characters and cuts it at MaxLineChars.
func (d *Draft) line(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	n := d.s.MaxLineChars
	if n <= 0 {
		n = 120
	}
	if r := []rune(s); len(r) > n {
		return string(r[:clusterCut(r, n-1)]) + placeholder
	}
	return s
}
