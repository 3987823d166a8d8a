package actors_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// TestSubagentArchived: a finished child is unloaded at once (not after session.idleMinutes),
// scheduled for archiving in the store, and archived archiveAfterMinutes after it ended, also
// when the gateway was restarted in between: its link is marked archived, its transcript
// kept, and its parent lists it archived.
func TestSubagentArchived(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	db := filepath.Join(t.TempDir(), "reef.db")
	script := faultScript(map[string]any{"task": "look around", "label": "Scout"}, func(req fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "scouted"}
	})
	hook := func(a *actors.Agent) { a.Subagents.ArchiveAfter = time.Minute }
	open := func() *harness {
		return newHarness(t, harnessOpts{script: script, extra: sessionsAndWeather(), agentHook: hook, dbPath: db, clock: clock})
	}
	h := open()
	h.say("42", "go")
	if got := h.reply().Text; got != "status: completed" {
		t.Fatalf("answer %q", got)
	}
	l := linkByLabel(t, h, "Scout")
	if want := l.Ended.Add(time.Minute); !l.ArchiveDue.Equal(want) || !l.Archived.IsZero() {
		t.Fatalf("link after the run: due %v archived %v, want due %v and not archived", l.ArchiveDue, l.Archived, want)
	}
	waitFor(t, func() bool { return !slices.Contains(h.rt.LiveSessionKeys(), l.Child) }) // the clock stands still: not idleness
	if !slices.Contains(h.rt.LiveSessionKeys(), h.key("42")) {
		t.Errorf("the parent was unloaded too")
	}
	h.rt.Sweep() // not due yet
	h.say("42", "/subagents list")
	if got := h.reply().Text; !strings.Contains(got, "1. Scout — completed,") {
		t.Errorf("/subagents list before archiving: %q", got)
	}
	before := len(childEntries(t, h)[l.Child])
	if before == 0 {
		t.Fatal("the child has no transcript")
	}

	h.stop() // restart: the schedule is in the store
	clock.Advance(2 * time.Minute)
	h = open()
	waitFor(t, func() bool {
		h.rt.Sweep()
		return !linkByLabel(t, h, "Scout").Archived.IsZero()
	})
	l = linkByLabel(t, h, "Scout")
	if !l.ArchiveDue.IsZero() || l.Status != "completed" || l.Answer != "scouted" {
		t.Errorf("archived link: %+v", l)
	}
	if n := len(childEntries(t, h)[l.Child]); n != before {
		t.Errorf("the archived child's transcript has %d entries, want the %d it had", n, before)
	}
	h.say("42", "/subagents list")
	if got := h.reply().Text; !strings.Contains(got, "1. Scout — completed (archived)") {
		t.Errorf("/subagents list after archiving: %q", got)
	}
}
