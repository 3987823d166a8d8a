package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
)

// bigTranscript is a conversation of about 170,000 tokens (645,000 characters): 300 turns of a
// user message, a tool call with a 1,190-character result and an answer.
func bigTranscript() []messages.ChatMessage {
	var msgs []messages.ChatMessage
	for i := range 300 {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, user(strings.Repeat("question ", 60)), assistant("", id),
			result(id, strings.Repeat("result ", 170)), assistant(strings.Repeat("answer ", 60)))
	}
	return msgs
}

// BenchmarkEstimateRequest is the check every LLM call makes before it is sent.
func BenchmarkEstimateRequest(b *testing.B) {
	msgs := bigTranscript()
	b.ReportAllocs()
	for b.Loop() {
		EstimateRequest("system prompt", msgs, nil)
	}
}

// BenchmarkPlanCut plans a compaction of the same transcript keeping 20,000 tokens.
func BenchmarkPlanCut(b *testing.B) {
	msgs := bigTranscript()
	b.ReportAllocs()
	for b.Loop() {
		PlanCut(msgs, DefaultKeepRecentTokens)
	}
}
