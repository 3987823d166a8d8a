package actors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/schedule"
)

// delivery channel sends the reply to the named chat; none delivers nothing; wakeMode
// next-heartbeat waits for the agent's heartbeat.
func TestCronDeliveryAndWakeModes(t *testing.T) {
	start := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	clock := testutil.NewClock(start)
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		last := r.Messages[len(r.Messages)-1].Content
		for _, word := range []string{"to-channel", "to-none", "at-heartbeat"} {
			if strings.Contains(last, word) {
				return fakellm.Reply{Text: "answer " + word}
			}
		}
		return fakellm.Reply{Text: "hi"}
	}
	h := newTimerHarness(t, timerOpts{script: script, clock: clock, timer: actors.TimerSettings{
		Heartbeats: map[string]actors.HeartbeatSettings{"main": {Every: time.Hour}}}})
	h.say("42", "hello")
	h.reply()
	add := func(text string, extra map[string]any) schedule.Job {
		job := map[string]any{"schedule": map[string]any{"kind": "cron", "expr": "10 8 * * *"},
			"payload": map[string]any{"kind": "systemEvent", "text": text}}
		for k, v := range extra {
			job[k] = v
		}
		var j schedule.Job
		if err := cronDo(t, h, "add", map[string]any{"job": job}, &j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	add("to-channel", map[string]any{"sessionTarget": "isolated", "delivery": map[string]any{"mode": "channel", "channel": "fake", "to": "77"}})
	add("to-none", map[string]any{"delivery": map[string]any{"mode": "none"}})
	hb := add("at-heartbeat", map[string]any{"wakeMode": "next-heartbeat"})

	clock.Advance(10 * time.Minute) // 08:10: two jobs run, the third waits for the 09:00 heartbeat
	settleClock(t, clock)
	if got := h.reply(); got.ChatID != "77" || got.Text != "answer to-channel" {
		t.Errorf("channel delivery: %+v", got)
	}
	waitUntil(t, "the runs", func() bool { return timerIdle(t, h) && inboxEmpty(t, h.store, h.key("42")) })
	if n := len(systemEvents(t, h.store, h.key("42"), "to-none")); n != 1 {
		t.Errorf("the none job ran %d times", n)
	}
	if n := len(systemEvents(t, h.store, h.key("42"), "at-heartbeat")); n != 0 {
		t.Errorf("the next-heartbeat job ran before the heartbeat")
	}
	clock.Set(start.Add(time.Hour)) // 09:00 heartbeat
	settleClock(t, clock)
	if got := h.reply(); got.ChatID != "42" || got.Text != "answer at-heartbeat" {
		t.Errorf("next-heartbeat job reply: %+v (the none job's answer must not be sent)", got)
	}
	var runs []schedule.Run
	cronDo(t, h, "runs", map[string]any{"id": hb.ID}, &runs)
	if len(runs) != 1 || runs[0].Reason != "heartbeat" {
		t.Errorf("next-heartbeat runs: %+v", runs)
	}
}
