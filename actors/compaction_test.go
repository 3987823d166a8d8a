package actors_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// memoryFile finds the memory file a flush prompt names.
var memoryFile = regexp.MustCompile(`memory/\d{4}-\d{2}-\d{2}\.md`)

// projectID is the identifier of the first turn that must survive every compaction.
const projectID = "PRJ-7731"

// compactModel plays a model for compaction tests: it answers summary calls with a summary that
// keeps projectID when the conversation it is shown holds it (or the previous summary does),
// answers "look it up" with a call to the lookup tool, and everything else with a short answer.
type compactModel struct {
	mu    sync.Mutex
	turns int
	flush func(r fakellm.Request) fakellm.Reply // answers memory-flush calls; nil: NO_REPLY
}

func isSummaryCall(r fakellm.Request) bool {
	return strings.Contains(r.System, "You write the memory of a conversation")
}

func isFlushCall(r fakellm.Request) bool {
	for _, m := range r.Messages {
		if m.Role == messages.RoleSystem && strings.HasPrefix(m.Content, "Memory flush") {
			return true
		}
	}
	return false
}

func (m *compactModel) respond(r fakellm.Request) fakellm.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := r.Messages[len(r.Messages)-1]
	switch {
	case isSummaryCall(r):
		s := "Goal: chat. Identifiers: none."
		if strings.Contains(last.Content, projectID) {
			s = "Goal: help with the user's project. Identifiers: project id " + projectID + "."
		}
		return fakellm.Reply{Text: s}
	case isFlushCall(r):
		if m.flush != nil {
			return m.flush(r)
		}
		return fakellm.Reply{Text: agent.SilentToken}
	case last.Role == messages.RoleUser && strings.Contains(last.Content, "look it up"):
		m.turns++
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call(fmt.Sprintf("look_%d", m.turns), "lookup", map[string]any{"q": m.turns})}}
	case last.Role == messages.RoleTool:
		return fakellm.Reply{Text: "Found it: " + strings.Repeat("detail ", 200)}
	}
	m.turns++
	return fakellm.Reply{Text: fmt.Sprintf("Answer %d: %s", m.turns, strings.Repeat("noted ", 150))}
}

// lookupTool returns a long result, so tool pairs take room in the transcript.
var lookupTool = &testTool{name: "lookup", run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
	return tools.Result{Content: "lookup result " + strings.Repeat("data ", 600)}, nil
}}

// filler is a user message of about n tokens, tagged so a test can find it in a request.
func filler(tag string, n int) string {
	return tag + " " + strings.Repeat("lorem ", n*4/6)
}

func smallWindow(flush bool) func(a *actors.Agent) {
	return func(a *actors.Agent) {
		a.ContextWindow = 16000
		a.Compaction = actors.Compaction{MemoryFlush: flush}
	}
}

// checkRequestPairs fails unless every tool result in the request answers a call of an earlier
// assistant message of the same request, and every call has its result.
func checkRequestPairs(t *testing.T, i int, r fakellm.Request) {
	t.Helper()
	calls, results := map[string]bool{}, map[string]bool{}
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == messages.RoleTool {
			if !calls[m.ToolCallID] {
				t.Errorf("request %d: result for call %s without the call before it", i, m.ToolCallID)
			}
			results[m.ToolCallID] = true
		}
	}
	for id := range calls {
		if !results[id] {
			t.Errorf("request %d: call %s without its result", i, id)
		}
	}
}

func summaryIn(r fakellm.Request) (string, bool) {
	for _, m := range r.Messages {
		if s, ok := agent.SummaryOf(m); ok {
			return s, true
		}
	}
	return "", false
}

func latestSnapshot(t *testing.T, h *harness, chat string) (persistence.Snapshot, bool) {
	t.Helper()
	var snap persistence.Snapshot
	var ok bool
	err := h.store.View(func(r persistence.Reader) error {
		var err error
		snap, ok, err = r.LatestSnapshot(h.key(chat))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap, ok
}

// TestCompactionLongConversation talks to a 16k-token model until the transcript no longer
// fits: the older part is summarized by the model, later requests carry the summary instead of
// the old messages, tool pairs stay whole, the first turn's identifier survives, and a restart
// continues from the stored snapshot.
func TestCompactionLongConversation(t *testing.T) {
	model := &compactModel{}
	script := fakellm.NewScript()
	script.Respond = model.respond
	dbPath := filepath.Join(t.TempDir(), "reef.db")
	h := newHarness(t, harnessOpts{script: script, dbPath: dbPath, extra: []tools.Tool{lookupTool},
		agentHook: smallWindow(false)})

	h.say("1", filler("TURN-1 my project id is "+projectID+".", 1500))
	h.reply()
	for turn := 2; turn <= 16; turn++ {
		text := filler(fmt.Sprintf("TURN-%d", turn), 1500)
		if turn%2 == 0 {
			text = "please look it up. " + text
		}
		h.say("1", text)
		if out := h.reply(); strings.TrimSpace(out.Text) == "" {
			t.Fatalf("turn %d: empty reply", turn)
		}
	}
	h.say("1", "what was my project id?")
	h.reply()
	summaryAt, resummaries := -1, 0
	for i, r := range script.Requests() {
		if !isSummaryCall(r) {
			continue
		}
		if summaryAt < 0 {
			summaryAt = i
		}
		if strings.Contains(r.Messages[0].Content, "<previous-summary>") {
			resummaries++
		}
	}
	if summaryAt < 0 || resummaries == 0 {
		t.Fatalf("16 turns of ~1500 tokens in a 16k window: first compaction at request %d, %d later ones; want at least two",
			summaryAt, resummaries)
	}
	t.Logf("first compaction at request %d of %d, %d later summary calls", summaryAt, len(script.Requests()), resummaries)

	reqs := script.Requests()
	sum := reqs[summaryAt]
	if !strings.Contains(sum.Messages[0].Content, "TURN-1") || !strings.Contains(sum.Messages[0].Content, projectID) {
		t.Errorf("the summary call does not carry the first turn")
	}
	if len(sum.Tools) != 0 {
		t.Errorf("the summary call offers tools %v", sum.Tools)
	}
	for i, r := range reqs {
		if isSummaryCall(r) {
			continue
		}
		checkRequestPairs(t, i, r)
		if i < summaryAt {
			continue
		}
		s, ok := summaryIn(r)
		if !ok {
			t.Errorf("request %d after the compaction has no summary", i)
		}
		if !requestHas(r, projectID) || !strings.Contains(s, projectID) {
			t.Errorf("request %d lost the project id of the first turn", i)
		}
		if requestHas(r, "TURN-1 ") {
			t.Errorf("request %d still holds the first turn's raw message", i)
		}
		if n := agent.EstimateTokens(r.System) + agent.EstimateMessages(r.Messages); n > 16000 {
			t.Errorf("request %d holds ~%d tokens, over the 16k window", i, n)
		}
	}

	snap, ok := latestSnapshot(t, h, "1")
	if !ok || !strings.Contains(snap.Summary, projectID) || snap.Kind != "" {
		t.Fatalf("stored snapshot = %+v, %v; want the summary", snap, ok)
	}
	entries := h.transcript("1")
	checkPairs(t, entries)
	if !strings.Contains(entries[0].Content, "TURN-1") {
		t.Errorf("the transcript lost its first entry; compaction must not delete entries")
	}

	// A restart loads the snapshot: summary + the entries after it.
	h.stop()
	h2 := newHarness(t, harnessOpts{script: script, dbPath: dbPath, extra: []tools.Tool{lookupTool},
		agentHook: smallWindow(false)})
	n := len(script.Requests())
	h2.say("1", "and after the restart?")
	h2.reply()
	r := script.Requests()[n]
	if s, ok := summaryIn(r); !ok || s != snap.Summary {
		t.Fatalf("after a restart the request's summary = %q, %v; want the stored one", s, ok)
	}
	var after []persistence.Entry
	if err := h2.store.View(func(rd persistence.Reader) error {
		var err error
		after, err = rd.Messages(h2.key("1"), snap.Seq)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// after holds the entries after the snapshot, this run's user message and its reply: the
	// request is the summary, those entries and the user message.
	if got, want := len(r.Messages), len(after); got != want {
		t.Errorf("after a restart the request has %d messages, want %d: the summary and the entries after the snapshot", got, want)
	}
	checkRequestPairs(t, n, r)
}

// TestMemoryFlushBeforeCompaction: before an automatic compaction the agent gets a silent step
// to write notes; its write lands in the workspace, nothing of it is delivered or kept in the
// transcript the model sees afterwards.
func TestMemoryFlushBeforeCompaction(t *testing.T) {
	now := time.Date(2026, 11, 22, 23, 30, 0, 0, time.UTC)
	model := &compactModel{}
	var flushes int
	model.flush = func(r fakellm.Request) fakellm.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == messages.RoleTool {
			return fakellm.Reply{Text: agent.SilentToken}
		}
		flushes++
		file := memoryFile.FindString(r.Messages[len(r.Messages)-1].Content)
		return fakellm.Reply{Text: "saving notes", ToolCalls: []messages.ToolCall{call(fmt.Sprintf("flush_%d", flushes), "write",
			map[string]any{"path": file, "content": "- project id " + projectID + "\n"})}}
	}
	script := fakellm.NewScript()
	script.Respond = model.respond
	ws := t.TempDir()
	tokyo := time.FixedZone("JST", 9*3600)
	h := newHarness(t, harnessOpts{script: script, workspace: ws, now: func() time.Time { return now },
		agentHook: func(a *actors.Agent) { smallWindow(true)(a); a.Location = tokyo }})

	h.say("1", filler("TURN-1 my project id is "+projectID+".", 1500))
	h.reply()
	for turn := 2; turn <= 20; turn++ {
		h.say("1", filler(fmt.Sprintf("TURN-%d", turn), 1500))
		out := h.reply()
		if strings.Contains(out.Text, "saving notes") || strings.Contains(out.Text, agent.SilentToken) {
			t.Fatalf("the memory flush was delivered: %q", out.Text)
		}
		if _, ok := latestSnapshot(t, h, "1"); ok {
			break
		}
	}
	got, err := os.ReadFile(filepath.Join(ws, "memory", "2026-11-23.md"))
	if err != nil || !strings.Contains(string(got), projectID) {
		t.Fatalf("memory file = %q, %v; want the flush's note (dated in the agent's time zone)", got, err)
	}
	if flushes != 1 {
		t.Errorf("%d flushes for one compaction, want 1", flushes)
	}
	reqs := script.Requests()
	flushAt, summaryAt := -1, -1
	for i, r := range reqs {
		if isFlushCall(r) && flushAt < 0 {
			flushAt = i
		}
		if isSummaryCall(r) && summaryAt < 0 {
			summaryAt = i
		}
	}
	if flushAt < 0 || summaryAt < flushAt {
		t.Fatalf("flush call at %d, summary call at %d: want the flush first", flushAt, summaryAt)
	}
	for i, r := range reqs[summaryAt:] {
		if isFlushCall(r) || requestHas(r, "saving notes") {
			t.Errorf("request %d after the flush still carries the flush", summaryAt+i)
		}
	}
	for _, e := range h.transcript("1") {
		if strings.HasPrefix(e.Content, "Memory flush") || e.Content == "saving notes" || e.ToolName == "write" {
			t.Errorf("the transcript keeps a flush entry: %+v", e.ChatMessage)
		}
	}
}

// TestCompactionInsideOneRun: one request that makes many tool calls outgrows the window in
// the middle of its run; the cut falls between the run's own steps, the snapshot covers
// entries of that run (stored in the same transaction), and a restart continues from it.
func TestCompactionInsideOneRun(t *testing.T) {
	var mu sync.Mutex
	steps := 0
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		if isSummaryCall(r) {
			return fakellm.Reply{Text: "Goal: the big job for " + projectID + ". Done: several lookups."}
		}
		mu.Lock()
		defer mu.Unlock()
		if steps++; steps <= 14 {
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call(fmt.Sprintf("big_%d", steps), "lookup", map[string]any{"n": steps})}}
		}
		return fakellm.Reply{Text: "the big job is done"}
	}
	dbPath := filepath.Join(t.TempDir(), "reef.db")
	h := newHarness(t, harnessOpts{script: script, dbPath: dbPath, extra: []tools.Tool{lookupTool}, agentHook: smallWindow(false)})
	h.say("1", "do the big job for "+projectID)
	if out := h.reply(); out.Text != "the big job is done" {
		t.Fatalf("reply = %q", out.Text)
	}
	reqs := script.Requests()
	compacted := false
	for i, r := range reqs {
		if isSummaryCall(r) {
			compacted = true
			continue
		}
		checkRequestPairs(t, i, r)
		if compacted {
			if _, ok := summaryIn(r); !ok {
				t.Errorf("request %d after the compaction has no summary", i)
			}
		}
	}
	if !compacted {
		t.Fatal("14 tool results of ~750 tokens in a 16k window did not compact")
	}
	entries := h.transcript("1")
	checkPairs(t, entries)
	snap, ok := latestSnapshot(t, h, "1")
	if !ok || snap.Seq <= entries[0].Seq {
		t.Fatalf("snapshot = %+v, %v; want one covering entries of the run beyond its user message", snap, ok)
	}
	for _, e := range entries {
		if e.Seq == snap.Seq && e.Role == messages.RoleAssistant && len(e.ToolCalls) > 0 {
			t.Errorf("the snapshot ends on a tool call (seq %d) whose result comes after it", e.Seq)
		}
	}

	h.stop()
	h2 := newHarness(t, harnessOpts{script: script, dbPath: dbPath, extra: []tools.Tool{lookupTool}, agentHook: smallWindow(false)})
	n := len(script.Requests())
	h2.say("1", "thanks")
	h2.reply()
	r := script.Requests()[n]
	if s, ok := summaryIn(r); !ok || s != snap.Summary {
		t.Errorf("after a restart the summary = %q, %v; want the stored one", s, ok)
	}
	if r.Messages[1].Role == messages.RoleTool {
		t.Error("after a restart the request starts with a tool result")
	}
	checkRequestPairs(t, n, r)
}

// TestSteerDuringMemoryFlush: a message sent while the memory flush runs is not taken into the
// flush (whose entries are dropped) but into the run after the compaction.
func TestSteerDuringMemoryFlush(t *testing.T) {
	slow, started, release := heldTool("lookup", "noted")
	model := &compactModel{}
	flushCalls := 0
	model.flush = func(r fakellm.Request) fakellm.Reply {
		if flushCalls++; flushCalls == 1 {
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("flush_1", "lookup", map[string]any{"q": "notes"})}}
		}
		if requestHas(r, "STEERED") {
			return fakellm.Reply{Text: "the flush saw the steered message"}
		}
		return fakellm.Reply{Text: agent.SilentToken}
	}
	script := fakellm.NewScript()
	script.Respond = model.respond
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{slow}, agentHook: smallWindow(true)})

	h.say("1", filler("TURN-1 my project id is "+projectID+".", 1500))
	h.reply()
	for turn := 2; turn <= 20; turn++ {
		h.say("1", filler(fmt.Sprintf("TURN-%d", turn), 1500))
		select {
		case <-started: // the flush is running its tool call
			h.say("1", "STEERED: also tell me the time")
			h.say("1", "/status") // answered at once; by then the steered message is on its way to the Turn
			if out := h.reply(); !strings.HasPrefix(out.Text, "Session: ") {
				t.Fatalf("reply during the flush = %q, want the /status answer", out.Text)
			}
			close(release)
			out := h.reply()
			if strings.Contains(out.Text, "flush") {
				t.Fatalf("reply = %q", out.Text)
			}
			reqs := script.Requests()
			last := reqs[len(reqs)-1]
			if isFlushCall(last) || !requestHas(last, "STEERED") {
				t.Fatal("the run after the compaction does not carry the steered message")
			}
			var steered int
			for _, e := range h.transcript("1") {
				if strings.Contains(e.Content, "STEERED") {
					steered++
				}
			}
			if steered != 1 {
				t.Errorf("the steered message is %d times in the transcript, want once", steered)
			}
			return
		case <-h.ch.Sent: // a turn without a compaction
		}
	}
	t.Fatal("no memory flush in 20 turns")
}
