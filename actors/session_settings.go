package actors

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/persistence"
)

// statusText is the /status answer.
func (s *Session) statusText() string {
	model, _ := s.agent.model(s.info.Model)
	think := s.info.Think
	if think == "" {
		think = "default"
	}
	reasoning := "hidden"
	if s.info.ShowReasoning {
		reasoning = "shown"
	}
	u := s.info.Usage
	ctxTokens := s.contextTokens() // system prompt, tools and history (session_compact.go)
	fill := 0
	if model.ContextWindow > 0 {
		fill = 100 * ctxTokens / model.ContextWindow
	}
	running := "idle"
	if s.wait != nil && s.turn == nil {
		running = "waiting for the model"
	}
	if s.turn != nil {
		running = "answering"
		if labels := slices.Sorted(maps.Values(s.tools)); len(labels) > 0 {
			running = "running " + strings.Join(labels, ", ")
		}
	}
	now := s.deps.now()
	started := s.info.Started
	if started.IsZero() {
		started = s.info.Created
	}
	age := "new"
	if !started.IsZero() {
		age = "started " + roughDuration(now.Sub(started)) + " ago"
	}
	channel := ""
	if s.info.Channel != "" {
		channel = s.info.Channel
	}
	return joinLines(
		"Session: "+s.key,
		fmt.Sprintf("Model: %s (think: %s, reasoning: %s)", model.Label, think, reasoning),
		fmt.Sprintf("Tokens used: %s in, %s out over %d runs", thousands(u.InputTokens), thousands(u.OutputTokens), s.info.Turns),
		s.budgetLine(now),
		s.outageLine(now), // session_outage.go
		fmt.Sprintf("Context: ~%s of %s tokens (%d%%)", thousands(ctxTokens), thousands(model.ContextWindow), fill),
		"Queue: "+describeQueue(s.queueSettings(channel), s.queue.len()),
		"Now: "+running,
		s.approvalLine(),
		s.subagentStatusLine(), // subagent_commands.go
		s.processLine(),        // processes.go
		fmt.Sprintf("Session %s · reef up %s", age, roughDuration(now.Sub(s.deps.started))),
	)
}

// resolveModel finds the model a user named: a full "provider/model" label, or the part
// after the slash when it names one offered model. Only the owner may name a model the agent
// does not offer (its model and models); a guest may choose among those, or, with
// session.guestModels: none, not at all.
func (s *Session) resolveModel(name string, owner bool) (string, error) {
	if !owner && s.deps.session().GuestModels == GuestModelsNone {
		return "", errors.New("Only the owner may choose the model here.")
	}
	offered := append([]string{s.agent.Model}, s.agent.Models...)
	label := ""
	for _, m := range offered {
		if strings.EqualFold(m, name) {
			label = m
		}
	}
	if label == "" {
		var matches []string
		for _, m := range offered {
			if _, short, _ := strings.Cut(m, "/"); strings.EqualFold(short, name) && !slices.Contains(matches, m) {
				matches = append(matches, m)
			}
		}
		switch {
		case len(matches) == 1:
			label = matches[0]
		case len(matches) > 1:
			return "", fmt.Errorf("%q could be %s. Name one of them.", name, strings.Join(matches, " or "))
		case strings.Contains(name, "/") && owner:
			label = name
		default:
			return "", fmt.Errorf("Unknown model %q. Available: %s.", name, strings.Join(dedupe(offered), ", "))
		}
	}
	m, err := s.agent.model(label)
	if err != nil {
		return "", fmt.Errorf("Cannot use %s: %v.", label, err)
	}
	if m.ContextWindow > 0 && m.ContextWindow < agent.MinContextWindow {
		return "", fmt.Errorf("Cannot use %s: its context window is %s tokens and reef needs at least %s.",
			label, thousands(m.ContextWindow), thousands(agent.MinContextWindow))
	}
	if label == s.agent.Model {
		return "", nil
	}
	return label, nil
}

// setModel is /model [name].
func (s *Session) setModel(args []string, owner bool) string {
	current, _ := s.agent.model(s.info.Model)
	if len(args) == 0 {
		return fmt.Sprintf("Model: %s. Available: %s. Switch with /model <name>.",
			current.Label, strings.Join(dedupe(append([]string{s.agent.Model}, s.agent.Models...)), ", "))
	}
	label, err := s.resolveModel(args[0], owner)
	if err != nil {
		return err.Error()
	}
	s.info.Model = label
	m, _ := s.agent.model(label)
	return fmt.Sprintf("Model set to %s for this session (from the next run).", m.Label)
}

// setThink is /think off|low|medium|high|default. A guest may only lower the effort (off,
// low, default): more costs the owner; with session.guestModels: none not even that.
func (s *Session) setThink(args []string, owner bool) string {
	if len(args) == 0 {
		level := s.info.Think
		if level == "" {
			level = "default"
		}
		return "Thinking: " + level + ". Use /think off|low|medium|high|default."
	}
	level := strings.ToLower(args[0])
	switch {
	case owner:
	case s.deps.session().GuestModels == GuestModelsNone:
		return "Only the owner may change the thinking level here."
	case level == "medium" || level == "high":
		return "Only the owner may raise the thinking level; you may use /think off|low|default."
	}
	switch level {
	case "off", "low", "medium", "high":
		s.info.Think = level
		return "Thinking set to " + level + "."
	case "default":
		s.info.Think = ""
		return "Thinking back to the model's default."
	}
	return "Use /think off|low|medium|high|default."
}

// setReasoning is /reasoning on|off.
func (s *Session) setReasoning(args []string) string {
	if len(args) == 1 {
		switch strings.ToLower(args[0]) {
		case "on":
			s.info.ShowReasoning = true
			return "Reasoning will be shown before replies (when the model shares it)."
		case "off":
			s.info.ShowReasoning = false
			return "Reasoning hidden."
		}
	}
	return "Use /reasoning on|off."
}

// setQueue is /queue [mode] [debounce] [cap] [drop], with "key:value" forms accepted too
// ("debounce:2s cap:10 drop:old"); /queue default clears the session's own settings.
func (s *Session) setQueue(args []string, channel string) string {
	usage := "Use /queue steer|followup|collect|interrupt [debounce like 2s] [cap like 20] [drop summarize|old|new], or /queue default."
	if len(args) == 0 {
		return "Queue: " + describeQueue(s.queueSettings(channel), s.queue.len()) + ". " + usage
	}
	q := s.info.Queue
	for _, arg := range args {
		key, val, ok := strings.Cut(strings.ToLower(arg), ":")
		if !ok {
			key, val = "", key
		}
		switch {
		case val == "default" || val == "reset":
			q = persistence.QueueSettings{}
		case (key == "" || key == "mode") && slices.Contains([]string{QueueSteer, QueueFollowup, QueueCollect, QueueInterrupt}, val):
			q.Mode = val
		case (key == "" || key == "drop") && slices.Contains([]string{DropSummarize, DropOld, DropNew}, val):
			q.Drop = val
		case key == "cap" || (key == "" && isDigits(val)):
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1000 {
				return "The queue cap must be a number from 1 to 1000. " + usage
			}
			q.Cap = n
		case key == "debounce" || key == "":
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 || d > 10*time.Minute {
				return fmt.Sprintf("I don't understand %q. %s", arg, usage)
			}
			q.Debounce = int(d / time.Millisecond)
			if q.Debounce == 0 {
				q.Debounce = -1 // explicitly none (0 means "inherit")
			}
		default:
			return fmt.Sprintf("I don't understand %q. %s", arg, usage)
		}
	}
	s.info.Queue = q
	return "Queue: " + describeQueue(s.queueSettings(channel), s.queue.len()) + "."
}

func isDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// thousands formats n compactly: 950, 12.3k, 1.2M.
func thousands(n int) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	case n >= 10_000:
		return strconv.Itoa(n/1000) + "k"
	case n >= 1000:
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/1000, 'f', 1, 64), ".0") + "k"
	}
	return strconv.Itoa(n)
}

// roughDuration is a duration for people: 45s, 12m, 3h 20m, 2d 4h.
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

// budgetLine is the /status line on the daily token budget ("" without one).
func (s *Session) budgetLine(now time.Time) string {
	budget := s.dailyBudget()
	if budget <= 0 {
		return ""
	}
	used := 0
	if s.info.BudgetDay == s.budgetDay(now) {
		used = s.info.BudgetTokens
	}
	return fmt.Sprintf("Today: %s of %s tokens of the daily budget", thousands(used), thousands(budget))
}
