package actors_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
)

// lastContent is the content of the last message of req.
func lastContent(req fakellm.Request) string {
	if n := len(req.Messages); n > 0 {
		return req.Messages[n-1].Content
	}
	return ""
}

// sessionModeScript: the parent spawns a child of mode session labelled Counter (with
// cleanup), steers it on "steer it", sends it work on "send it", yields after each, and
// reports each completion as "report <n>: <status>, <stats>". The child answers each job with
// what it was asked.
func sessionModeScript(cleanup string) *fakellm.Script {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		last := lastContent(req)
		if isChild(req) {
			job := "first job"
			for _, j := range []string{"second job", "third job"} {
				if strings.Contains(last, j) {
					job = j
				}
			}
			return fakellm.Reply{Text: "done: " + job, Usage: messages.Usage{InputTokens: 10, OutputTokens: 1}}
		}
		switch t := lastTool(req); {
		case t == subagent.ToolYield: // refused
			return fakellm.Reply{Text: "nothing to wait for: " + last}
		case t == subagent.ToolSpawn || t == subagent.ToolSubagents || t == subagent.ToolSend:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call(fmt.Sprintf("y%d", len(req.Messages)), subagent.ToolYield, map[string]string{})}}
		case strings.Contains(last, "[Internal event: a sub-agent finished"):
			line := func(p string) string { i := strings.Index(last, p); return strings.SplitN(last[i:], "\n", 2)[0] }
			stats := line("stats: ")
			stats = stats[strings.Index(stats, "tokens"):] // not the runtime: a loaded machine may take a second
			return fakellm.Reply{Text: fmt.Sprintf("report %d: %s; %s; %s", len(completions(req)), line("status: "), stats, line("mode: "))}
		case strings.Contains(last, "steer it"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("st", subagent.ToolSubagents,
				map[string]string{"action": "steer", "target": "Counter", "message": "second job"})}}
		case strings.Contains(last, "send it"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("se", subagent.ToolSend, map[string]string{"label": "Counter", "message": "third job"})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("sp", subagent.ToolSpawn,
			map[string]string{"task": "first job", "label": "Counter", "mode": "session", "cleanup": cleanup})}}
	}
	return script
}

// TestSubagentSessionMode: a child spawned with mode session stays addressable after its run:
// subagents steer and sessions_send (by label, without waiting) each start a new run of it,
// and each run reports to the parent with a completion of its own, counting that run's tokens.
// Between runs the child is unloaded, not archived.
func TestSubagentSessionMode(t *testing.T) {
	script := sessionModeScript("")
	h := subHarness(t, script, nil)
	h.say("42", "start")
	if got := h.reply().Text; !strings.HasPrefix(got, "report 1: status: completed; tokens in 10, out 1; mode: session, run 1") {
		t.Fatalf("first report %q", got)
	}
	child := linkByLabel(t, h, "Counter").Child
	waitFor(t, func() bool { return !slices.Contains(h.rt.LiveSessionKeys(), child) })

	h.say("42", "steer it")
	if got := h.reply().Text; !strings.HasPrefix(got, "report 2: status: completed; tokens in 10, out 1; mode: session, run 2") {
		t.Fatalf("report after steer %q", got)
	}
	h.say("42", "send it")
	if got := h.reply().Text; !strings.HasPrefix(got, "report 3: status: completed; tokens in 10, out 1; mode: session, run 3") {
		t.Fatalf("report after sessions_send %q", got)
	}
	h.say("42", "/subagents list")
	if got := h.reply().Text; !strings.Contains(got, "1. Counter (mode session, 3 runs) — completed") {
		t.Errorf("/subagents list: %q", got)
	}
	results := checkPairs(t, h.transcript("42"))
	if r := results["se"]; r.IsError || !strings.Contains(r.Content, `"status":"sent"`) {
		t.Errorf("sessions_send result %q, want sent without waiting", r.Content)
	}
	if r := results["st"]; r.IsError || !strings.Contains(r.Content, `"status":"steered"`) {
		t.Errorf("subagents steer result %q", r.Content)
	}
	l := linkByLabel(t, h, "Counter")
	if l.Runs != 3 || l.Status != messages.SubagentCompleted || l.Answer != "done: third job" || l.Usage.InputTokens != 30 || !l.Archived.IsZero() {
		t.Errorf("link after three runs: %+v", l)
	}
	var answers []string
	for _, e := range childEntries(t, h)[child] {
		if e.Role == messages.RoleAssistant {
			answers = append(answers, e.Content)
		}
	}
	if want := []string{"done: first job", "done: second job", "done: third job"}; !slices.Equal(answers, want) {
		t.Errorf("the child's transcript answers %q, want %q (one session, three runs)", answers, want)
	}
	var info persistence.SessionInfo
	h.store.View(func(r persistence.Reader) error { info, _, _ = r.Session(h.key("42")); return nil })
	if info.BudgetTokens != 33 {
		t.Errorf("the parent's budget counts %d tokens of its child, want 33 (each run once)", info.BudgetTokens)
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("another message reached the user: %q", out.Text)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestSubagentSessionModeArchived: a child of mode session with cleanup delete keeps its
// session between runs; once archived (archiveAfterMinutes after its last run) its session is
// removed, and more work for it is refused with the reason.
func TestSubagentSessionModeArchived(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	script := sessionModeScript("delete")
	h := newHarness(t, harnessOpts{script: script, extra: sessionsAndWeather(), clock: clock, dbPath: filepath.Join(t.TempDir(), "reef.db"),
		agentHook: func(a *actors.Agent) { a.Subagents.ArchiveAfter = time.Minute }})
	h.say("42", "start")
	if got := h.reply().Text; !strings.HasPrefix(got, "report 1: status: completed") {
		t.Fatalf("first report %q", got)
	}
	child := linkByLabel(t, h, "Counter").Child
	if len(childEntries(t, h)[child]) == 0 {
		t.Fatal("the child's session was removed after its first run; mode session keeps it until archived")
	}
	clock.Advance(30 * time.Second)
	h.say("42", "steer it") // a run restarts the archive window
	if got := h.reply().Text; !strings.HasPrefix(got, "report 2: status: completed") {
		t.Fatalf("report after steer %q", got)
	}
	clock.Advance(45 * time.Second) // 75 s after the first run, 45 s after the second
	h.rt.Sweep()
	h.say("42", "/subagents list") // the Router has handled the sweep before this message's routing
	if got := h.reply().Text; strings.Contains(got, "archived") {
		t.Errorf("archived within a minute of its last run: %q", got)
	}
	clock.Advance(time.Minute)
	waitFor(t, func() bool {
		h.rt.Sweep()
		return !linkByLabel(t, h, "Counter").Archived.IsZero()
	})
	if n := len(childEntries(t, h)[child]); n != 0 {
		t.Errorf("the archived child (cleanup delete) still has %d transcript entries", n)
	}
	waitFor(t, func() bool {
		h.say("42", "/subagents list")
		return strings.Contains(h.reply().Text, "1. Counter (mode session, 2 runs) — completed (archived)")
	})
	h.say("42", "send it")
	got := h.reply().Text
	results := checkPairs(t, h.transcript("42"))
	if r := results["se"]; !r.IsError || !strings.Contains(r.Content, "archived") {
		t.Errorf("sessions_send to an archived child: %q, want refused as archived (user saw %q)", r.Content, got)
	}
}
