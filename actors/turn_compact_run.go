package actors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// runCompaction plans the cut and writes the summary, in the goroutine startSummary started.
// The part to summarize goes to the run's model in chunks that fit its window, each call
// updating a running summary that starts from the previous one.
func runCompaction(ctx context.Context, in *turnInput, j *compactJob) *compactDone {
	fixed := requestPrompt(in).fixed
	b := in.budget(fixed)
	done := &compactDone{step: j.step, fixed: fixed}
	if j.previous != "" {
		done.start = 1
	}
	rest := j.view[done.start:]
	keep := b.KeepRecent(j.keep)
	if j.overflow { // the estimate was too low: keep less than usual
		keep = min(keep, agent.EstimateMessages(rest)/2)
	}
	done.cut = done.start + agent.PlanCut(rest, keep)
	if done.cut == done.start {
		done.after = fixed + agent.EstimateMessages(j.view)
		return done
	}
	part := j.view[done.start:done.cut]
	maxTokens := b.SummaryTokens()
	system := agent.SummarySystemPrompt(j.instructions, maxTokens)
	chunkTokens := b.SummaryChunkTokens(agent.EstimateTokens(system))
	summary := j.previous
	for _, chunk := range agent.ChunkMessages(part, chunkTokens) {
		text, usage, err := summarize(ctx, in.model, system, agent.SummaryInput(summary, chunk, chunkTokens), maxTokens,
			in.agent.Limits.withDefaults())
		done.usage = done.usage.Add(usage)
		if err != nil {
			done.err = fmt.Errorf("compaction: summary of %d messages: %w", len(part), err)
			return done
		}
		summary = text
	}
	done.summary, done.count = summary, len(part)
	kept := append([]messages.ChatMessage{agent.SummaryEntry(summary, in.deps.now())}, j.view[done.cut:]...)
	done.after = fixed + agent.EstimateMessages(kept)
	return done
}

// errEmptySummary is a summary call that answered nothing.
var errEmptySummary = errors.New("the model returned an empty summary")

// summarize makes one summary call with the run's model, without tools, within the limits on
// a model answer (its length and its wall time).
func summarize(ctx context.Context, m ModelChoice, system, input string, maxTokens int, lim Limits) (string, messages.Usage, error) {
	callCtx, cancel := context.WithTimeout(ctx, lim.StreamTimeout)
	defer cancel()
	_, model, _ := strings.Cut(m.Label, "/")
	stream, err := m.Provider.Stream(callCtx, providers.Request{
		Model: model, System: system, MaxTokens: maxTokens,
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: input}},
	})
	if err != nil {
		return "", messages.Usage{}, streamErr(ctx, callCtx, err, lim.StreamTimeout)
	}
	defer stream.Close()
	var text strings.Builder
	var usage messages.Usage
	for text.Len() <= lim.MaxAnswerChars { // bytes ≥ characters: stops at the latest past the cap
		ev, err := stream.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", usage, streamErr(ctx, callCtx, err, lim.StreamTimeout)
		}
		switch ev.Kind {
		case providers.EventText:
			text.WriteString(ev.Text)
		case providers.EventUsage:
			usage = ev.Usage
		}
	}
	summary := strings.TrimSpace(runePrefix(text.String(), lim.MaxAnswerChars))
	if summary == "" {
		return "", usage, errEmptySummary
	}
	return summary, usage, nil
}
