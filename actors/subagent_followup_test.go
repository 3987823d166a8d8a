package actors_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
)

// activeLine is the "[Active sub-agents]" block of the last step of req, or "".
func activeLine(req fakellm.Request) string {
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != messages.RoleAssistant; i-- {
		if c := req.Messages[i].Content; strings.HasPrefix(c, "[Active sub-agents]") {
			return c
		}
	}
	return ""
}

// childAnswers are the answers (assistant texts) in the transcript of the child labelled label.
func childAnswers(t *testing.T, h *harness, label string) []string {
	t.Helper()
	var out []string
	for _, e := range childEntries(t, h)[linkByLabel(t, h, label).Child] {
		if e.Role == messages.RoleAssistant && e.Content != "" {
			out = append(out, e.Content)
		}
	}
	return out
}

// yielded reports whether the run of chat's session called sessions_yield (and it is recorded).
func yielded(h *harness, chat string) bool {
	for _, e := range h.transcript(chat) {
		if e.Role == messages.RoleTool && e.ToolName == subagent.ToolYield {
			return true
		}
	}
	return false
}

// noMoreReplies fails the test when another message reaches a user within 300 ms.
func noMoreReplies(t *testing.T, h *harness) {
	t.Helper()
	select {
	case out := <-h.ch.Sent:
		t.Errorf("another message reached a user: %q", out.Text)
	case <-time.After(300 * time.Millisecond):
	}
}

// parentCompletions are the completion events in the parent's transcript of chat.
func parentCompletions(h *harness, chat string) []string {
	var out []string
	for _, e := range h.transcript(chat) {
		if e.Role == messages.RoleSystem && strings.Contains(e.Content, "[Internal event: a sub-agent finished") {
			out = append(out, e.Content)
		}
	}
	return out
}

// TestSubagentFollowUpDuringFirstTask: the parent spawns a child of mode session and sends it
// a follow-up while the child is still on its first task (subagents steer, or sessions_send).
// The child runs twice, and each run gives exactly one completion. At the first completion the
// parent is told the child is still working (its "active sub-agents" count holds it, so the
// parent waits); at the second it is told none runs, and it answers the user once.
func TestSubagentFollowUpDuringFirstTask(t *testing.T) {
	for _, tool := range []string{subagent.ToolSubagents, subagent.ToolSend} {
		t.Run(tool, func(t *testing.T) { followUpDuringFirstTask(t, tool) })
	}
}

func followUpDuringFirstTask(t *testing.T, tool string) {
	slow, started, release := heldTool("slow", "slow done")
	var mu sync.Mutex
	var woken []string // per completion request: its active block
	followUp := call("f", subagent.ToolSubagents, map[string]string{"action": "steer", "target": "Counter", "message": "second job"})
	if tool == subagent.ToolSend {
		followUp = call("f", subagent.ToolSend, map[string]any{"label": "Counter", "message": "second job"})
	}
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		last := lastContent(req)
		switch {
		case isChild(req) && strings.Contains(last, "second job"):
			return fakellm.Reply{Text: "done: second job"}
		case isChild(req) && lastTool(req) == "slow":
			return fakellm.Reply{Text: "done: first job"}
		case isChild(req):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case len(completions(req)) > 0:
			mu.Lock()
			woken = append(woken, activeLine(req))
			mu.Unlock()
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: fmt.Sprintf("final after %d completions", len(completions(req)))}
		case lastTool(req) == subagent.ToolSpawn:
			<-started // the child is on its first task: its tool runs
			return fakellm.Reply{ToolCalls: []messages.ToolCall{followUp}}
		case lastTool(req) == tool:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("sp", subagent.ToolSpawn,
			map[string]string{"task": "first job", "label": "Counter", "mode": "session"})}}
	}
	h := subHarness(t, script, nil, slow)
	h.say("42", "start")
	waitFor(t, func() bool { return yielded(h, "42") }) // the follow-up is sent and the parent waits
	close(release)
	if got := h.reply().Text; got != "final after 2 completions" {
		t.Fatalf("the user got %q, want one final answer after both runs", got)
	}
	noMoreReplies(t, h)

	cs := parentCompletions(h, "42")
	if len(cs) != 2 {
		t.Fatalf("the parent holds %d completions, want 2 (one per run)", len(cs))
	}
	for i, c := range cs {
		if want := fmt.Sprintf("mode: session, run %d", i+1); !strings.Contains(c, want) {
			t.Errorf("completion %d lacks %q:\n%s", i+1, want, c)
		}
	}
	if !strings.Contains(cs[0], "still working") || strings.Contains(cs[1], "still working") {
		t.Errorf("only the first completion should say the child is still working:\n%s\n---\n%s", cs[0], cs[1])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(woken) != 2 || !strings.Contains(woken[0], "1 still running: Counter") || woken[1] != "" {
		t.Errorf("the parent's active sub-agents at each completion: %q, want 1 (Counter) then none", woken)
	}
	if got, want := childAnswers(t, h, "Counter"), []string{"done: first job", "done: second job"}; !slices.Equal(got, want) {
		t.Errorf("the child answered %q, want %q", got, want)
	}
	if l := linkByLabel(t, h, "Counter"); l.Runs != 2 || l.Status != messages.SubagentCompleted || l.Active() {
		t.Errorf("link after both runs: runs %d, status %s", l.Runs, l.Status)
	}
}

// TestSubagentFollowUpTakesSlot: with maxConcurrent 1, a follow-up of a child of mode session
// that ended waits for the slot another child holds. It is marked queued in the store and
// shown queued to the parent, its run starts once the slot frees, and its run's end frees the
// slot again.
func TestSubagentFollowUpTakesSlot(t *testing.T) {
	slow, started, release := heldTool("slow", "slow done")
	var early atomic.Bool // the follow-up's run started while the other child held the slot
	var held atomic.Bool
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		last := lastContent(req)
		switch {
		case isChild(req) && strings.Contains(last, "second job"):
			if held.Load() {
				early.Store(true)
			}
			return fakellm.Reply{Text: "done: second job"}
		case isChild(req) && taskOf(req) == "block" && lastTool(req) == "":
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case isChild(req):
			return fakellm.Reply{Text: "done: " + taskOf(req)}
		case strings.Contains(last, "[Internal event: a sub-agent finished"):
			label := strings.SplitN(last[strings.Index(last, "label: ")+len("label: "):], "\n", 2)[0]
			return fakellm.Reply{Text: "report: " + label}
		case lastTool(req) == subagent.ToolList:
			return fakellm.Reply{Text: "list: " + last}
		case lastTool(req) != "":
			return fakellm.Reply{Text: "ok: " + lastTool(req)}
		case strings.Contains(last, "check"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("l", subagent.ToolList, map[string]any{"kinds": "subagent"})}}
		case strings.Contains(last, "reader"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("sr", subagent.ToolSpawn,
				map[string]string{"task": "first job", "label": "Reader", "mode": "session"})}}
		case strings.Contains(last, "blocker"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("sb", subagent.ToolSpawn,
				map[string]string{"task": "block", "label": "Blocker"})}}
		case strings.Contains(last, "third"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("st", subagent.ToolSpawn,
				map[string]string{"task": "third", "label": "Third"})}}
		case strings.Contains(last, "steer"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("f", subagent.ToolSubagents,
				map[string]string{"action": "steer", "target": "Reader", "message": "second job"})}}
		}
		return fakellm.Reply{Text: "?"}
	}
	h := subHarness(t, script, func(a *actors.Agent) { a.Subagents.MaxConcurrent = 1 }, slow)
	replies := func(n int) []string {
		var out []string
		for range n {
			out = append(out, h.reply().Text)
		}
		slices.Sort(out)
		return out
	}
	h.say("42", "reader")
	if got := replies(2); !slices.Equal(got, []string{"ok: sessions_spawn", "report: Reader"}) {
		t.Fatalf("replies %q", got)
	}
	h.say("42", "blocker")
	if got := h.reply().Text; got != "ok: sessions_spawn" {
		t.Fatalf("reply %q", got)
	}
	<-started // Blocker holds the only slot
	held.Store(true)
	h.say("42", "steer")
	if got := h.reply().Text; got != "ok: subagents" {
		t.Fatalf("reply %q", got)
	}
	waitFor(t, func() bool { return linkByLabel(t, h, "Reader").Status == messages.SubagentQueued })
	waitFor(t, func() bool { // the parent hears of it once the mark is durable
		h.say("42", "/subagents list")
		return strings.Contains(h.reply().Text, "Reader (mode session, 1 runs) — queued")
	})
	h.say("42", "/status")
	if got := h.reply().Text; !strings.Contains(got, "Sub-agents: 1 running, 1 queued") {
		t.Errorf("/status: %q", got)
	}
	h.say("42", "check")
	if got := h.reply().Text; !strings.Contains(got, `"label":"Reader","status":"queued"`) || !strings.Contains(got, `"label":"Blocker","status":"running"`) {
		t.Errorf("sessions_list: %q", got)
	}
	held.Store(false)
	close(release)
	if got := replies(2); !slices.Equal(got, []string{"report: Blocker", "report: Reader"}) {
		t.Fatalf("replies after the slot freed %q", got)
	}
	if early.Load() {
		t.Error("the follow-up's run started while another child held the only slot")
	}
	if l := linkByLabel(t, h, "Reader"); l.Runs != 2 || l.Status != messages.SubagentCompleted {
		t.Errorf("Reader after its follow-up: runs %d, status %s", l.Runs, l.Status)
	}
	h.say("42", "third") // the follow-up's run freed the slot when it ended
	if got := replies(2); !slices.Equal(got, []string{"ok: sessions_spawn", "report: Third"}) {
		t.Fatalf("replies %q", got)
	}
}

// TestSubagentFollowUpRace: eight conversations at once each spawn a child of mode session
// and steer it at once, without waiting for anything, then yield: the follow-up may reach
// the child before its first run, during it, or after its end was recorded, and the child's
// completion may reach the parent before or after the follow-up is stored. Whatever the
// order, every run of the child gives exactly one completion, the parent is woken by each
// and answers the user once, after the last, and the child answered both jobs.
func TestSubagentFollowUpRace(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			var jobs []string
			for _, m := range req.Messages[max(0, len(req.Messages)-2):] { // what this run answers
				for _, j := range []string{"first job", "second job"} {
					if strings.Contains(m.Content, j) && m.Role != messages.RoleAssistant {
						jobs = append(jobs, j)
					}
				}
			}
			return fakellm.Reply{Text: "done: " + strings.Join(jobs, " and ")}
		case len(completions(req)) > 0:
			if waiting(req) {
				return fakellm.Reply{Text: "NO_REPLY"}
			}
			return fakellm.Reply{Text: fmt.Sprintf("final after %d completions", len(completions(req)))}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("f", subagent.ToolSubagents,
				map[string]string{"action": "steer", "target": "Counter", "message": "second job"})}}
		case lastTool(req) == subagent.ToolSubagents:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y", subagent.ToolYield, map[string]string{})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("sp", subagent.ToolSpawn,
			map[string]string{"task": "first job", "label": "Counter", "mode": "session"})}}
	}
	h := subHarness(t, script, nil)
	chats := []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}
	for _, c := range chats {
		h.say(c, "start")
	}
	got := map[string][]string{}
	for range chats {
		out := h.reply()
		got[out.ChatID] = append(got[out.ChatID], out.Text)
	}
	select {
	case out := <-h.ch.Sent:
		got[out.ChatID] = append(got[out.ChatID], out.Text)
	case <-time.After(500 * time.Millisecond):
	}
	children := map[string]subagent.Link{}
	for _, l := range links(t, h) {
		children[l.Parent] = l
	}
	entries := childEntries(t, h)
	for _, c := range chats {
		l := children[h.key(c)]
		cs := parentCompletions(h, c)
		if len(cs) != l.Runs || l.Active() {
			t.Errorf("chat %s: %d completions for %d runs (child %s)", c, len(cs), l.Runs, l.Status)
		}
		if want := fmt.Sprintf("final after %d completions", l.Runs); len(got[c]) != 1 || got[c][0] != want {
			t.Errorf("chat %s: the user got %q, want only %q", c, got[c], want)
		}
		var answers []string
		for _, e := range entries[l.Child] {
			if e.Role == messages.RoleAssistant && e.Content != "" {
				answers = append(answers, e.Content)
			}
		}
		if all := strings.Join(answers, "; "); len(answers) != l.Runs || !strings.Contains(all, "first job") || !strings.Contains(all, "second job") {
			t.Errorf("chat %s: the child answered %q in %d runs, want both jobs, one answer a run", c, answers, l.Runs)
		}
	}
}

// TestSubagentKillDropsFollowUps: a child of mode session is killed on its first task while a
// follow-up waits for it. The follow-up is dropped with it: the child ends stopped, with one
// completion, and runs no more; a follow-up sent after the kill runs it again.
func TestSubagentKillDropsFollowUps(t *testing.T) {
	slow, started, _ := heldTool("slow", "never")
	var second atomic.Int32
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		last := lastContent(req)
		switch {
		case isChild(req) && strings.Contains(last, "second job"):
			second.Add(1)
			return fakellm.Reply{Text: "done: second job"}
		case isChild(req) && strings.Contains(last, "third job"):
			return fakellm.Reply{Text: "done: third job"}
		case isChild(req):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("w", "slow", map[string]string{})}}
		case strings.Contains(last, "[Internal event: a sub-agent finished"):
			return fakellm.Reply{Text: "report: " + strings.SplitN(last[strings.Index(last, "status: "):], "\n", 2)[0]}
		case lastTool(req) != "":
			return fakellm.Reply{Text: "ok: " + lastTool(req)}
		case strings.Contains(last, "second"), strings.Contains(last, "third"):
			job := "second job"
			if strings.Contains(last, "third") {
				job = "third job"
			}
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("f", subagent.ToolSubagents,
				map[string]string{"action": "steer", "target": "Counter", "message": job})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("sp", subagent.ToolSpawn,
			map[string]string{"task": "first job", "label": "Counter", "mode": "session"})}}
	}
	h := subHarness(t, script, nil, slow)
	h.say("42", "start")
	if got := h.reply().Text; got != "ok: sessions_spawn" {
		t.Fatalf("reply %q", got)
	}
	<-started
	h.say("42", "second")
	if got := h.reply().Text; got != "ok: subagents" {
		t.Fatalf("reply %q", got)
	}
	waitFor(t, func() bool { return linkByLabel(t, h, "Counter").FollowUps == 1 })
	h.say("42", "/subagents kill Counter")
	if got := h.reply().Text; got != "Stopping 1 sub-agent(s)." {
		t.Fatalf("kill: %q", got)
	}
	waitFor(t, func() bool { return linkByLabel(t, h, "Counter").Status == messages.SubagentStopped })
	waitFor(t, func() bool {
		h.say("42", "/subagents list")
		return strings.Contains(h.reply().Text, "1. Counter (mode session, 1 runs) — stopped")
	})
	l := linkByLabel(t, h, "Counter")
	var inbox int
	h.store.View(func(r persistence.Reader) error { items, _ := r.Inbox(l.Child); inbox = len(items); return nil })
	if inbox != 0 || second.Load() != 0 {
		t.Errorf("after the kill the child's inbox holds %d entries and the dropped follow-up ran %d times, want 0 and 0", inbox, second.Load())
	}
	if l.Runs != 1 || l.Active() {
		t.Errorf("after the kill: runs %d, status %s; want 1 run, ended", l.Runs, l.Status)
	}
	noMoreReplies(t, h) // a stopped child's completion is recorded, not announced

	h.say("42", "third") // a follow-up after the kill: a new run
	if got := replies2(h); !slices.Equal(got, []string{"ok: subagents", "report: status: completed"}) {
		t.Fatalf("replies after a new follow-up %q", got)
	}
	if l := linkByLabel(t, h, "Counter"); l.Runs != 2 || l.Status != messages.SubagentCompleted || second.Load() != 0 {
		t.Errorf("after the new follow-up: runs %d, status %s, the dropped one ran %d times", l.Runs, l.Status, second.Load())
	}
}

// replies2 returns the next two replies, sorted.
func replies2(h *harness) []string {
	out := []string{h.reply().Text, h.reply().Text}
	slices.Sort(out)
	return out
}
