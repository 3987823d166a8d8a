package actors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/schedule"
)

// The story: the user asks for a daily 18:10 check; the model schedules it with the
// cron tool in Asia/Shanghai; at 18:10 Shanghai time the session receives the system event
// and runs a turn that uses tools; the answer reaches the user's chat.
func TestCronEndToEndShanghai(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)) // 17:00 in Shanghai
	text := "Check the workspace for new .log files and tell me what's in them; if there are none, tick HEARTBEAT.md."
	script := fakellm.NewScript(
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("c1", "cron", map[string]any{"action": "add", "job": map[string]any{
			"name":     "daily logs",
			"schedule": map[string]any{"kind": "cron", "expr": "10 18 * * *", "tz": "Asia/Shanghai"},
			"payload":  map[string]any{"kind": "systemEvent", "text": text},
		}})}},
		fakellm.Reply{Text: "Done: every day at 18:10 I will check for new .log files."},
		fakellm.Reply{ToolCalls: []messages.ToolCall{call("c2", "ls", map[string]any{"path": "."})}},
		fakellm.Reply{Text: "No new .log files today; HEARTBEAT.md ticked."},
	)
	h := newTimerHarness(t, timerOpts{script: script, clock: clock})
	h.say("42", "every day at 18:10, check my workspace for new .log files and tell me what's in them; if there are none, tick HEARTBEAT.md")
	if got := h.reply(); !strings.Contains(got.Text, "18:10") {
		t.Fatalf("reply = %q", got.Text)
	}
	results := checkPairs(t, h.transcript("42"))
	if r := results["c1"]; r.IsError {
		t.Fatalf("cron add failed: %s", r.Content)
	}
	var added schedule.Job
	if err := jsonUnmarshal(results["c1"].Content, &added); err != nil {
		t.Fatal(err)
	}
	wantNext := time.Date(2026, 11, 22, 10, 10, 0, 0, time.UTC)
	if added.ID == "" || added.AgentID != "main" || added.SessionKey != h.key("42") || added.CreatedAtMs == 0 ||
		added.UpdatedAtMs == 0 || added.State.NextRunAtMs != wantNext.UnixMilli() {
		t.Errorf("added job = %+v, want id, agent, session, times and next run %v", added, wantNext)
	}

	clock.Advance(69 * time.Minute) // 18:09 Shanghai: nothing yet
	settleClock(t, clock)
	if n := len(script.Requests()); n != 2 {
		t.Fatalf("%d provider calls before 18:10, want 2", n)
	}
	clock.Advance(time.Minute)
	got := h.reply()
	if got.ChatID != "42" || !strings.Contains(got.Text, "No new .log files") {
		t.Errorf("cron run reply = %+v", got)
	}
	reqs := script.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d provider calls, want 4", len(reqs))
	}
	var event string
	for _, m := range reqs[2].Messages {
		if m.Role == messages.RoleSystem && strings.Contains(m.Content, "[Scheduled reminder]") {
			event = m.Content
		}
	}
	for _, want := range []string{text, "do not relay", "Asia/Shanghai", "18:10 CST", "10:10 UTC", "daily logs"} {
		if !strings.Contains(event, want) {
			t.Errorf("system event lacks %q:\n%s", want, event)
		}
	}
	results = checkPairs(t, h.transcript("42"))
	if r, ok := results["c2"]; !ok || r.IsError || r.ToolName != "ls" {
		t.Errorf("the cron turn's ls call: %+v (present %v)", r, ok)
	}
	var jobs []schedule.Job
	cronDo(t, h, "list", map[string]any{}, &jobs)
	if len(jobs) != 1 || jobs[0].State.LastRunAtMs != wantNext.UnixMilli() ||
		jobs[0].State.NextRunAtMs != wantNext.Add(24*time.Hour).UnixMilli() {
		t.Errorf("after the run: %+v", jobs)
	}
	waitUntil(t, "the run to be marked ok", func() bool {
		cronDo(t, h, "list", map[string]any{}, &jobs)
		return jobs[0].State.LastStatus == "ok"
	})
}
