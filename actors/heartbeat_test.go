package actors_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
)

type beatStatus struct {
	Heartbeats map[string]struct {
		Sent, Skipped int
		LastAtMs      int64
		Busy          bool
	}
}

func heartbeatStatus(t *testing.T, h *harness) (sent, skipped int, last time.Time, busy bool) {
	t.Helper()
	var st beatStatus
	if err := cronDo(t, h, "status", map[string]any{}, &st); err != nil {
		t.Fatal(err)
	}
	b := st.Heartbeats["main"]
	return b.Sent, b.Skipped, time.UnixMilli(b.LastAtMs), b.Busy
}

// beatWeek steps the fake clock by every for n beats, waiting after each until the Timer
// handled it and any run it started finished.
func beatWeek(t *testing.T, h *harness, clock *testutil.Clock, every time.Duration, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		clock.Advance(every)
		now := clock.Now()
		waitUntil(t, "the heartbeat", func() bool {
			_, _, last, busy := heartbeatStatus(t, h)
			return last.Equal(now) && !busy
		})
	}
}

func writeHeartbeat(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "HEARTBEAT.md"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A HEARTBEAT.md without tasks costs nothing: a simulated week of heartbeats, zero model calls.
func TestHeartbeatEmptyNoModelCalls(t *testing.T) {
	ws := t.TempDir()
	writeHeartbeat(t, ws, "# Heartbeat\n\n<!-- Add tasks below. -->\n\n## Later\n")
	clock := testutil.NewClock(time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC))
	script := fakellm.NewScript()
	h := newTimerHarness(t, timerOpts{script: script, clock: clock, workspace: ws})
	h.say("42", "hi")
	h.reply()
	const every = 30 * time.Minute
	beatWeek(t, h, clock, every, 7*24*2)
	if n := len(script.Requests()); n != 1 {
		t.Errorf("%d model calls over a week of empty heartbeats, want only the greeting's 1", n)
	}
	if sent, skipped, _, _ := heartbeatStatus(t, h); sent != 0 || skipped != 7*24*2 {
		t.Errorf("sent %d, skipped %d; want 0 and %d", sent, skipped, 7*24*2)
	}
}

// A task in HEARTBEAT.md: one model call per interval, inside active hours only; the
// HEARTBEAT_OK all-clear is not delivered, anything else is.
func TestHeartbeatTaskActiveHours(t *testing.T) {
	ws := t.TempDir()
	writeHeartbeat(t, ws, "# Heartbeat\n- check the build status\n")
	clock := testutil.NewClock(time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC))
	script := fakellm.NewScript(fakellm.Reply{Text: "hi"})
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: actors.HeartbeatOK} }
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	h := newTimerHarness(t, timerOpts{script: script, clock: clock, workspace: ws, timer: actors.TimerSettings{
		Heartbeats: map[string]actors.HeartbeatSettings{"main": {Every: time.Hour, ActiveStart: "09:00", ActiveEnd: "17:00", ActiveZone: tokyo}}}})
	h.say("42", "hi")
	h.reply()
	beatWeek(t, h, clock, time.Hour, 48) // two days: 09:00..16:00 Tokyo = 00:00..07:00 UTC, 8 beats a day
	reqs := script.Requests()
	if len(reqs) != 1+16 {
		t.Fatalf("%d model calls, want 1 + 16 (8 active hours a day for 2 days)", len(reqs))
	}
	if reqs[0].Priority != providers.PriorityPeople {
		t.Errorf("the person's call has priority %v, want PriorityPeople", reqs[0].Priority)
	}
	for _, r := range reqs[1:] {
		last := r.Messages[len(r.Messages)-1]
		if !strings.Contains(last.Content, "[Heartbeat]") {
			t.Errorf("heartbeat request ends with %q", last.Content)
		}
		if r.Priority != providers.PriorityBackground {
			t.Errorf("a heartbeat's call has priority %v, want PriorityBackground (people go first)", r.Priority)
		}
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("HEARTBEAT_OK was delivered: %+v", out)
	default:
	}
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "The build is red."} }
	clock.Set(time.Date(2026, 11, 18, 0, 30, 0, 0, time.UTC)) // move into the active hours
	beatWeek(t, h, clock, time.Hour, 1)
	if got := h.reply(); got.ChatID != "42" || got.Text != "The build is red." {
		t.Errorf("heartbeat finding delivered as %+v", got)
	}
}

// Heartbeats pause while the provider rejects the key: after a 401 the next intervals make no
// model call (and reef says why); a run that reaches the model resumes them.
func TestHeartbeatPausesOnRejectedKey(t *testing.T) {
	ws := t.TempDir()
	writeHeartbeat(t, ws, "# Heartbeat\n- check the build status\n")
	clock := testutil.NewClock(time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC))
	script := fakellm.NewScript(fakellm.Reply{Text: "hi"})
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Status: 401} }
	h := newTimerHarness(t, timerOpts{script: script, clock: clock, workspace: ws})
	h.say("42", "hi")
	h.reply()
	beatWeek(t, h, clock, 30*time.Minute, 1)
	waitUntil(t, "the pause", func() bool { return h.rt.HeartbeatPauses()["main"] != "" })
	calls := len(script.Requests())
	beatWeek(t, h, clock, 30*time.Minute, 3)
	if n := len(script.Requests()); n != calls {
		t.Fatalf("%d model calls while paused, want none", n-calls)
	}
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "the key works again"} }
	h.say("42", "are you there?")
	for out := range h.ch.Sent {
		if out.Text == "the key works again" {
			break
		}
	}
	waitUntil(t, "the resume", func() bool { return len(h.rt.HeartbeatPauses()) == 0 })
	calls = len(script.Requests())
	beatWeek(t, h, clock, 30*time.Minute, 1)
	if n := len(script.Requests()); n != calls+1 {
		t.Errorf("%d model calls for the first heartbeat after resuming, want 1", n-calls)
	}
}
