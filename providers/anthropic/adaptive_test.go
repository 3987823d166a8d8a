package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/anthropic/anthropictest"
	"github.com/reefgw/reef/providers/fake"
)

type thinkingBody struct {
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	OutputConfig *struct {
		Effort string `json:"effort"`
	} `json:"output_config"`
}

func thinkReq(model string) providers.Request {
	return providers.Request{Model: model, Reasoning: "high", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "think"}}}
}

// TestAdaptiveThinkingModels: /think on a model that takes only adaptive thinking (Opus
// 4.7) sends {"type":"adaptive"} with output_config.effort, and the API answers; an older
// model keeps the budget form (#33.10).
func TestAdaptiveThinkingModels(t *testing.T) {
	for model, want := range map[string]string{"claude-opus-4-7": "adaptive", "claude-sonnet-4-5": "enabled"} {
		t.Run(model, func(t *testing.T) {
			c, script := setup(t, fake.Reply{Text: "ok"})
			if _, err := collect(t, c, thinkReq(model)); err != nil {
				t.Fatalf("got %v, want an answer", err)
			}
			var b thinkingBody
			decodeInto(t, script.Requests()[0].Body, &b)
			if b.Thinking == nil || b.Thinking.Type != want {
				t.Fatalf("got thinking %+v, want type %s", b.Thinking, want)
			}
			if want == "adaptive" && (b.OutputConfig == nil || b.OutputConfig.Effort != "high" || b.Thinking.BudgetTokens != 0) {
				t.Errorf("got %+v effort %+v, want effort high and no budget", b.Thinking, b.OutputConfig)
			}
		})
	}
}

// TestAdaptiveThinkingLearned: a model not in the table that refuses the budget form is
// asked again at once in the adaptive form, and remembered: the next call asks in the
// adaptive form directly.
func TestAdaptiveThinkingLearned(t *testing.T) {
	script := fake.NewScript(fake.Reply{Text: "one"}, fake.Reply{Text: "two"})
	srv := anthropictest.NewServer(script, anthropictest.WithAdaptiveOnly("claude-future-9"))
	t.Cleanup(srv.Close)
	c := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: canary})
	for _, want := range []string{"one", "two"} {
		evs, err := collect(t, c, thinkReq("claude-future-9"))
		if err != nil {
			t.Fatalf("got %v, want %q", err, want)
		}
		if text, _, _, _ := summarize(evs); text != want {
			t.Errorf("got %q, want %q", text, want)
		}
	}
	for i, r := range script.Requests() {
		var b thinkingBody
		decodeInto(t, r.Body, &b)
		if b.Thinking == nil || b.Thinking.Type != "adaptive" {
			t.Errorf("answered request %d: thinking %+v, want adaptive", i, b.Thinking)
		}
	}
}

func decodeInto(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode body: %v", err)
	}
}
