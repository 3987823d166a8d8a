package configs

import (
	"strings"
	"testing"
)

// TestLimitsLoad: the limit keys load with their defaults, 0 turns the rate limit off, and a
// file written from an older example (maxRepeatCalls) still loads, with a note saying the key
// does nothing now.
func TestLimitsLoad(t *testing.T) {
	env := func(home string) func(string) string {
		return envOf(map[string]string{"REEF_HOME": home, "OPENAI_API_KEY": "sk-test"})
	}
	t.Run("defaults", func(t *testing.T) {
		home := t.TempDir()
		c, err := Load(writeConfig(t, home, "agents:\n  - id: main\n"), env(home))
		if err != nil {
			t.Fatal(err)
		}
		l, s := c.Agents[0].Limits, c.Session
		if l.LoopWarnAt != 10 || l.LoopStopAt != 20 || l.DailyTokenBudget != 0 {
			t.Errorf("limits = %+v, want loopWarnAt 10, loopStopAt 20, no budget", l)
		}
		if s.RateLimit.Messages == nil || *s.RateLimit.Messages != 20 || s.RateLimit.PerSeconds != 60 || s.DailyTokenBudget != 0 {
			t.Errorf("session = %+v, want rate limit 20 per 60 s and no budget", s)
		}
		if n := c.Notes(); len(n) != 0 {
			t.Errorf("notes = %q, want none", n)
		}
	})
	t.Run("set", func(t *testing.T) {
		home := t.TempDir()
		c, err := Load(writeConfig(t, home, `agents:
  - id: main
    limits: {loopStopAt: 8, dailyTokenBudget: 5000, maxRepeatCalls: 5}
session:
  rateLimit: {messages: 0, perSeconds: 30}
  dailyTokenBudget: 100000
`), env(home))
		if err != nil {
			t.Fatal(err)
		}
		l, s := c.Agents[0].Limits, c.Session
		if l.LoopWarnAt != 4 || l.LoopStopAt != 8 || l.DailyTokenBudget != 5000 {
			t.Errorf("limits = %+v, want loopWarnAt 4 (half of loopStopAt), loopStopAt 8, budget 5000", l)
		}
		if *s.RateLimit.Messages != 0 || s.RateLimit.PerSeconds != 30 || s.DailyTokenBudget != 100000 {
			t.Errorf("session = %+v, want the rate limit off and a budget of 100000", s)
		}
		if n := c.Notes(); len(n) != 1 || !strings.Contains(n[0], "agents[0].limits.maxRepeatCalls") {
			t.Errorf("notes = %q, want one about maxRepeatCalls", n)
		}
	})
}

func TestLimitsValidate(t *testing.T) {
	c := validConfig()
	c.Agents[0].Limits.LoopWarnAt = 20
	neg := -1
	c.Session.RateLimit.Messages = &neg
	c.Session.DailyTokenBudget = -5
	want := []string{
		`agents[0].limits.loopWarnAt: 20 is not below loopStopAt (20): the model would never be warned before the run stops`,
		`session.rateLimit.messages: -1 is negative: use 0 to turn the limit off, or a positive number`,
		`session.dailyTokenBudget: -5 is negative: use 0 for the default or a positive number`,
	}
	if got := errLines(c.Validate()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Validate() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOutputCapsLoad: the output caps (#20 finding 8) load with their defaults, take set
// values, and refuse negative ones.
func TestOutputCapsLoad(t *testing.T) {
	env := func(home string) func(string) string {
		return envOf(map[string]string{"REEF_HOME": home, "OPENAI_API_KEY": "sk-test"})
	}
	home := t.TempDir()
	c, err := Load(writeConfig(t, home, "agents:\n  - id: main\n"), env(home))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.LLM; l.MaxAnswerChars != 100000 || l.StreamTimeoutSeconds != 600 || c.Agents[0].Limits.MaxReplyChunks != 20 {
		t.Errorf("defaults: llm = %+v, maxReplyChunks %d; want 100000 characters, 600 s, 20 chunks", l, c.Agents[0].Limits.MaxReplyChunks)
	}
	c, err = Load(writeConfig(t, home, `agents:
  - id: main
    limits: {maxReplyChunks: 5}
llm: {maxAnswerChars: 2000, streamTimeoutSeconds: 30}
`), env(home))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.LLM; l.MaxAnswerChars != 2000 || l.StreamTimeoutSeconds != 30 || c.Agents[0].Limits.MaxReplyChunks != 5 {
		t.Errorf("set: llm = %+v, maxReplyChunks %d; want 2000, 30, 5", l, c.Agents[0].Limits.MaxReplyChunks)
	}
	v := validConfig()
	v.LLM.MaxAnswerChars, v.LLM.StreamTimeoutSeconds, v.Agents[0].Limits.MaxReplyChunks = -1, -2, -3
	got := strings.Join(errLines(v.Validate()), "\n")
	for _, key := range []string{"llm.maxAnswerChars: -1", "llm.streamTimeoutSeconds: -2", "agents[0].limits.maxReplyChunks: -3"} {
		if !strings.Contains(got, key) {
			t.Errorf("Validate() =\n%s\nwant a line for %s", got, key)
		}
	}
}
