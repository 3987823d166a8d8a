package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// respond is the fake model: "reply to <markers>" for the user messages of this turn; a
// message with benchToolWord first gets an ls tool call.
func (r *benchRig) respond(req fake.Request) fake.Reply {
	r.llmCalls.Add(1)
	delay := r.latency
	if r.jitter > 0 {
		delay += rand.N(r.jitter + 1)
	}
	if r.subagents {
		if reply, ok := r.respondSubagent(req, delay); ok {
			return reply
		}
	}
	msgs := req.Messages
	i := len(msgs) - 1
	toolsDone := 0
	for i >= 0 && (msgs[i].Role == messages.RoleTool || (msgs[i].Role == messages.RoleAssistant && len(msgs[i].ToolCalls) > 0)) {
		if msgs[i].Role == messages.RoleTool {
			toolsDone++
		}
		i--
	}
	var marks []string
	wantTool := false
	for ; i >= 0 && msgs[i].Role == messages.RoleUser; i-- {
		marks = append(benchMarker.FindAllString(msgs[i].Content, -1), marks...)
		wantTool = wantTool || strings.Contains(msgs[i].Content, benchToolWord)
	}
	if wantTool && toolsDone < max(1, r.toolsPerRun) {
		n := r.toolCalls.Add(1)
		return fake.Reply{Delay: delay, ToolCalls: []messages.ToolCall{{
			ID: "call_" + strconv.FormatInt(n, 10), Name: "ls", Arguments: `{"path":"."}`}}}
	}
	return r.answer(marks, delay)
}

// answer is the model's reply to the user messages that carry marks.
func (r *benchRig) answer(marks []string, delay time.Duration) fake.Reply {
	if len(marks) == 0 {
		return fake.Reply{Text: "ok", Delay: delay}
	}
	marks = dedupe(marks)
	now := time.Now()
	r.mu.Lock()
	for _, mk := range marks {
		r.asked[mk]++
		if m := r.msgs[mk]; m != nil && m.asked.IsZero() {
			m.asked = now
		}
	}
	r.answers++
	id := r.answers
	r.mu.Unlock()
	return fake.Reply{Text: fmt.Sprintf("reply to %s (ans-%d)", strings.Join(marks, " "), id), Delay: delay}
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
