package actors_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// costly answers every request with n and the usage of 60 tokens.
func costly(s *fakellm.Script) {
	var n int
	s.Respond = func(fakellm.Request) fakellm.Reply {
		n++
		return fakellm.Reply{Text: fmt.Sprintf("answer %d", n), Usage: messages.Usage{InputTokens: 45, OutputTokens: 15}}
	}
}

func sessionInfo(t *testing.T, h *harness, key string) persistence.SessionInfo {
	t.Helper()
	var info persistence.SessionInfo
	if err := h.store.View(func(r persistence.Reader) error {
		var err error
		info, _, err = r.Session(key)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return info
}

// TestDailyTokenBudget: two runs use up a budget of 100 tokens; the third message gets the
// notice without an LLM call, the fourth is kept in the transcript without a reply, and the
// next day (in the agent's time zone) the conversation is answered again.
func TestDailyTokenBudget(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	clock := testutil.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, shanghai))
	script := fakellm.NewScript()
	costly(script)
	h := newHarness(t, harnessOpts{script: script, clock: clock,
		session:   actors.SessionSettings{DailyTokenBudget: 100},
		agentHook: func(a *actors.Agent) { a.Location = shanghai }})

	for _, text := range []string{"first", "second"} { // 60 tokens each
		h.say("1", text)
		h.reply()
	}
	if got := sessionInfo(t, h, h.key("1")).BudgetTokens; got != 120 {
		t.Fatalf("budget used = %d, want 120", got)
	}
	calls := len(script.Requests())
	h.say("1", "third")
	want := "This conversation has used its daily budget of 100 tokens. It resets at midnight (Asia/Shanghai)."
	if got := h.reply().Text; got != want {
		t.Errorf("reply = %q, want %q", got, want)
	}
	h.say("1", "/compact")
	if got := h.reply().Text; !strings.HasPrefix(got, "Not now: this conversation has used its daily token budget") {
		t.Errorf("/compact over budget = %q", got)
	}
	h.say("1", "fourth: are you there?")
	waitUntil(t, "the fourth message to be recorded", func() bool { return inboxLen(t, h, h.key("1")) == 0 })
	clock.Set(time.Date(2026, 11, 23, 0, 1, 0, 0, shanghai))
	h.say("1", "good morning")
	if got := h.reply().Text; got != fmt.Sprintf("answer %d", calls+1) {
		t.Errorf("the next day's reply = %q, want the model's answer (and nothing for the fourth message)", got)
	}
	if n := len(script.Requests()); n != calls+1 {
		t.Errorf("%d LLM calls after the budget ran out, want only the next day's 1", n-calls)
	}
	last := script.Requests()[calls]
	if !requestHas(last, "third") || !requestHas(last, "fourth: are you there?") {
		t.Error("the next day's request does not show the messages sent while over budget")
	}
	if requestHas(last, "daily budget") {
		t.Error("the budget notice reached the model's transcript")
	}
	info := sessionInfo(t, h, h.key("1"))
	if info.BudgetDay != "2026-11-23" || info.BudgetTokens != 60 || info.BudgetNotified {
		t.Errorf("budget = %s %d notified %v, want 2026-11-23 60 false", info.BudgetDay, info.BudgetTokens, info.BudgetNotified)
	}
	if got := accepted(t, h, h.key("1")); got != 5 {
		t.Errorf("%d user messages in the transcript and inbox, want 5", got)
	}
	checkInboxEmpty(t, h, h.key("1"))
}

func inboxLen(t *testing.T, h *harness, key string) int {
	t.Helper()
	var n int
	if err := h.store.View(func(r persistence.Reader) error {
		items, err := r.Inbox(key)
		n = len(items)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func checkInboxEmpty(t *testing.T, h *harness, key string) {
	t.Helper()
	if n := inboxLen(t, h, key); n > 0 {
		t.Errorf("%d inbox entries left pending", n)
	}
}

// TestDailyTokenBudgetHeartbeat: heartbeats count against the budget, and once it is used up
// a heartbeat makes no LLM call (and leaves nothing pending); the next day it runs again.
func TestDailyTokenBudgetHeartbeat(t *testing.T) {
	ws := t.TempDir()
	writeHeartbeat(t, ws, "# Heartbeat\n- check the build status\n")
	clock := testutil.NewClock(time.Date(2026, 11, 16, 8, 0, 0, 0, time.UTC))
	script := fakellm.NewScript()
	costly(script)
	h := newTimerHarness(t, timerOpts{script: script, clock: clock, workspace: ws, now: true,
		session: actors.SessionSettings{DailyTokenBudget: 100}})
	h.say("42", "hi")
	h.reply()
	beatWeek(t, h, clock, 30*time.Minute, 1) // 120 tokens: over
	h.reply()
	beatWeek(t, h, clock, 30*time.Minute, 3)
	if n := len(script.Requests()); n != 2 {
		t.Errorf("%d LLM calls, want 2 (the greeting and the first heartbeat)", n)
	}
	if sent, _, _, _ := heartbeatStatus(t, h); sent != 4 {
		t.Errorf("%d heartbeats raised, want 4", sent)
	}
	if got := systemEvents(t, h.store, h.key("42"), "[Heartbeat]"); len(got) != 1 {
		t.Errorf("%d heartbeat events in the transcript, want 1 (skipped ones are not recorded)", len(got))
	}
	checkInboxEmpty(t, h, h.key("42"))
	select {
	case out := <-h.ch.Sent:
		t.Errorf("a skipped heartbeat sent %q", out.Text)
	default:
	}
	beatWeek(t, h, clock, 30*time.Minute, 27) // 10:30 to 23:30: skipped
	if n := len(script.Requests()); n != 2 {
		t.Errorf("%d LLM calls, want still 2", n)
	}
	beatWeek(t, h, clock, 30*time.Minute, 1) // midnight UTC, the agent's time zone: a new day
	if n := len(script.Requests()); n != 3 {
		t.Errorf("%d LLM calls, want 3: the next day's first heartbeat runs", n)
	}
}
