package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
)

// MinContextWindow is the smallest context window reef accepts for a model, in tokens. Below it
// the system prompt, the tool specs, a compaction summary and a few recent messages do not fit
// together with room for an answer.
const MinContextWindow = 16000

// DefaultKeepRecentTokens is how much of the most recent conversation a compaction keeps word for
// word, unless the window is too small for it (see ContextBudget.KeepRecent).
const DefaultKeepRecentTokens = 20000

// SummaryPrefix starts the system entry that carries a compaction summary in a transcript.
const SummaryPrefix = "Summary of the earlier conversation:\n"

// DefaultReserveTokens is the reserve for a model with a context window of window tokens:
// max(16384, window/5), but never more than a quarter of the window. A compaction starts when a
// request would hold more than window − reserve tokens, so the reserve covers the answer, the
// error of the token estimate (about ±20%) and what a run adds before its next LLM call. For
// 128k windows that is 25,600 tokens; for 1M windows 209,715; for a 16k window 4,000.
func DefaultReserveTokens(window int) int {
	return min(max(16384, window/5), window/4)
}

// ContextBudget is how one agent's requests share the model's context window.
type ContextBudget struct {
	Window  int // the model's context window, tokens
	Reserve int // tokens kept free for the answer and estimation error
	Fixed   int // the system prompt and tool specs of a request
}

// Limit is the most a request may hold before it is compacted: Window − Reserve.
func (b ContextBudget) Limit() int { return b.Window - b.Reserve }

// room is what the conversation may use of Limit once the fixed part is in.
func (b ContextBudget) room() int { return max(0, b.Limit()-b.Fixed) }

// KeepRecent is how many tokens of recent conversation a compaction keeps: configured (0 means
// DefaultKeepRecentTokens), but at most half of the room the conversation has, so the summary
// and the next messages fit beside it.
func (b ContextBudget) KeepRecent(configured int) int {
	if configured <= 0 {
		configured = DefaultKeepRecentTokens
	}
	return min(configured, b.room()/2)
}

// SummaryTokens is the longest summary a compaction asks for: a quarter of the conversation's
// room, between 256 and 8192 tokens.
func (b ContextBudget) SummaryTokens() int {
	return min(max(b.room()/4, 256), 8192)
}

// SummaryChunkTokens is how much conversation one summary call may carry: the window without the
// reserve, the summary prompt (promptTokens) and the running summary it updates.
func (b ContextBudget) SummaryChunkTokens(promptTokens int) int {
	return max(b.Window-b.Reserve-promptTokens-b.SummaryTokens(), 1000)
}

// EstimateToolSpecs estimates the tokens the tool specs of a request cost.
func EstimateToolSpecs(specs []messages.ToolSpec) int {
	n := 0
	for _, s := range specs {
		n += perMessageTokens + EstimateTokens(s.Name) + EstimateTokens(s.Description) + EstimateTokens(string(s.Parameters))
	}
	return n
}

// EstimateRequest estimates a whole request: system prompt, messages and tool specs.
func EstimateRequest(system string, msgs []messages.ChatMessage, specs []messages.ToolSpec) int {
	return EstimateTokens(system) + EstimateMessages(msgs) + EstimateToolSpecs(specs)
}

// PlanCut chooses where a compaction cuts msgs: msgs[:cut] is summarized, msgs[cut:] is kept
// as it is. The kept part is the longest suffix of at most keep tokens that starts at a safe
// cut (see CutPoints), preferring one that starts with a user or system entry (a turn
// boundary) over one that starts with an assistant entry. When even the shortest safe suffix
// is longer, everything up to the last safe cut is summarized. 0 means nothing is to be
// summarized: everything fits in keep, or there is no safe cut.
func PlanCut(msgs []messages.ChatMessage, keep int) int {
	ok := CutPoints(msgs)
	last := 0
	for i := len(msgs); i > 0; i-- { // the last safe cut: summarize as little as possible
		if ok[i] {
			last = i
			break
		}
	}
	safe, turn := last, -1
	kept := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		kept += EstimateMessages(msgs[i : i+1])
		if kept > keep {
			break
		}
		if !ok[i] || i >= last {
			continue
		}
		safe = i
		if r := msgs[i].Role; r == messages.RoleUser || r == messages.RoleSystem {
			turn = i
		}
	}
	if turn >= 0 {
		return turn
	}
	return safe
}

// CutPoints reports, for each i in 0..len(msgs), whether a compaction may cut right before
// msgs[i] (len(msgs): after the last one): every tool call before the cut has its result before
// the cut, and msgs[i] is not a tool result. Cutting anywhere else would leave a call without
// its result or a result without its call in what the model sees.
func CutPoints(msgs []messages.ChatMessage) []bool {
	ok := make([]bool, len(msgs)+1)
	open := map[string]int{}
	for i, m := range msgs {
		ok[i] = len(open) == 0 && m.Role != messages.RoleTool
		for _, c := range m.ToolCalls {
			open[c.ID]++
		}
		if m.Role == messages.RoleTool {
			if open[m.ToolCallID]--; open[m.ToolCallID] <= 0 {
				delete(open, m.ToolCallID)
			}
		}
	}
	ok[len(msgs)] = len(open) == 0
	return ok
}

// ChunkMessages splits msgs for summary calls of at most budget tokens each, in order. A message
// larger than budget gets a chunk of its own (SummaryInput shortens it).
func ChunkMessages(msgs []messages.ChatMessage, budget int) [][]messages.ChatMessage {
	var chunks [][]messages.ChatMessage
	start, size := 0, 0
	for i := range msgs {
		n := EstimateMessages(msgs[i : i+1])
		if i > start && size+n > budget {
			chunks = append(chunks, msgs[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(msgs) {
		chunks = append(chunks, msgs[start:])
	}
	return chunks
}

// SummaryEntry is the transcript entry that stands for everything a summary replaced.
func SummaryEntry(summary string, at time.Time) messages.ChatMessage {
	return messages.ChatMessage{Role: messages.RoleSystem, Content: SummaryPrefix + summary, Time: at}
}

// SummaryOf returns the summary a SummaryEntry carries and whether m is one.
func SummaryOf(m messages.ChatMessage) (string, bool) {
	if m.Role != messages.RoleSystem {
		return "", false
	}
	return strings.CutPrefix(m.Content, SummaryPrefix)
}

// FormatTokens writes a token count the short way: 850, 12k, 1.2M.
func FormatTokens(n int) string {
	switch {
	case n >= 999_500:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

// renderMessage writes one transcript entry as a line of the conversation a summary call reads.
func renderMessage(b *strings.Builder, m messages.ChatMessage, maxTokens int) {
	when := ""
	if !m.Time.IsZero() {
		when = " " + m.Time.Format("2006-01-02 15:04 MST")
	}
	switch m.Role {
	case messages.RoleTool:
		status := ""
		if m.IsError {
			status = " (error)"
		}
		fmt.Fprintf(b, "[tool result %s%s%s]\n", m.ToolName, status, when)
	default:
		fmt.Fprintf(b, "[%s%s]\n", m.Role, when)
	}
	if text := strings.TrimSpace(m.Content); text != "" {
		b.WriteString(shorten(text, maxTokens))
		b.WriteString("\n")
	}
	for _, c := range m.ToolCalls {
		args := c.Arguments
		var v any
		if json.Unmarshal([]byte(args), &v) == nil {
			if compact, err := json.Marshal(v); err == nil {
				args = string(compact)
			}
		}
		fmt.Fprintf(b, "(calls tool %s with %s)\n", c.Name, shorten(args, maxTokens/2))
	}
	b.WriteString("\n")
}

// shorten keeps text within about maxTokens: its head and its tail, with a marker between.
func shorten(text string, maxTokens int) string {
	est := EstimateTokens(text)
	if maxTokens <= 0 || est <= maxTokens {
		return text
	}
	n := len([]rune(text))
	keep := n * maxTokens / est
	head := keep * 2 / 3
	return runePrefix(text, head) + fmt.Sprintf("\n[… %d characters left out …]\n", n-keep) + runeSuffix(text, n, keep-head)
}
