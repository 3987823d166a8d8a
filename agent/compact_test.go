package agent

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
)

func user(text string) messages.ChatMessage {
	return messages.ChatMessage{Role: messages.RoleUser, Content: text}
}

func assistant(text string, calls ...string) messages.ChatMessage {
	m := messages.ChatMessage{Role: messages.RoleAssistant, Content: text}
	for _, id := range calls {
		m.ToolCalls = append(m.ToolCalls, messages.ToolCall{ID: id, Name: "read", Arguments: `{"path":"a.txt"}`})
	}
	return m
}

func result(id, text string) messages.ChatMessage {
	return messages.ChatMessage{Role: messages.RoleTool, ToolCallID: id, ToolName: "read", Content: text}
}

func TestCutPoints(t *testing.T) {
	msgs := []messages.ChatMessage{
		user("hi"),              // 0
		assistant("", "a", "b"), // 1
		result("a", "x"),        // 2
		result("b", "y"),        // 3
		assistant("done"),       // 4
		user("more"),            // 5
		assistant("", "c"),      // 6
		result("c", "z"),        // 7
		{Role: messages.RoleSystem, Content: "event"}, // 8
	}
	want := []bool{true, true, false, false, true, true, true, false, true, true}
	got := CutPoints(msgs)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cut before %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if got := CutPoints([]messages.ChatMessage{user("q"), assistant("", "open")}); got[2] {
		t.Error("a cut after an unanswered call is allowed")
	}
}

// checkCut fails when cutting msgs at cut separates a tool call from its result.
func checkCut(t *testing.T, msgs []messages.ChatMessage, cut int) {
	t.Helper()
	before := map[string]bool{}
	for _, m := range msgs[:cut] {
		for _, c := range m.ToolCalls {
			before[c.ID] = true
		}
	}
	answered := map[string]bool{}
	for _, m := range msgs[:cut] {
		if m.Role == messages.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	for id := range before {
		if !answered[id] {
			t.Fatalf("cut %d leaves call %s before the cut without its result", cut, id)
		}
	}
	for _, m := range msgs[cut:] {
		if m.Role == messages.RoleTool && before[m.ToolCallID] {
			t.Fatalf("cut %d leaves the result of call %s after the cut", cut, m.ToolCallID)
		}
	}
}

func TestPlanCutKeepsRecent(t *testing.T) {
	long := strings.Repeat("word ", 400) // about 500 tokens
	var msgs []messages.ChatMessage
	for i := range 10 {
		msgs = append(msgs, user(fmt.Sprintf("question %d %s", i, long)), assistant(fmt.Sprintf("answer %d %s", i, long)))
	}
	per := EstimateMessages(msgs[:1])
	tests := []struct {
		keep, want int
	}{
		{keep: 2*per + per/2, want: 18}, // two messages fit, the third does not
		{keep: 4 * per, want: 16},
		{keep: 0, want: 20},             // nothing kept: everything summarized
		{keep: 1_000_000, want: 0},      // everything fits: nothing to summarize
		{keep: per / 2, want: 20},       // not even the last message fits
		{keep: 3 * per, want: 18},       // three fit, but the turn boundary before the user is preferred
		{keep: 19*per + per/2, want: 2}, // the first turn
		{keep: 20*per + 100, want: 0},   // everything fits
		{keep: 6*per - 1, want: 16},     // just under six messages: two turns
		{keep: 6 * per, want: 14},       // exactly six messages
	}
	for _, tt := range tests {
		got := PlanCut(msgs, tt.keep)
		if got != tt.want {
			t.Errorf("PlanCut(keep %d) = %d, want %d", tt.keep, got, tt.want)
		}
		if kept := EstimateMessages(msgs[got:]); got < len(msgs) && kept > tt.keep {
			t.Errorf("PlanCut(keep %d) keeps %d tokens", tt.keep, kept)
		}
	}
}

func TestPlanCutNeverSplitsPairs(t *testing.T) {
	// A run of tool steps: the only safe cuts are before the assistant messages and the users.
	msgs := []messages.ChatMessage{user("start")}
	for i := range 8 {
		a, b := fmt.Sprintf("c%da", i), fmt.Sprintf("c%db", i)
		msgs = append(msgs, assistant("step", a, b), result(a, strings.Repeat("r", 2000)), result(b, strings.Repeat("s", 2000)))
	}
	msgs = append(msgs, assistant("final"))
	for keep := 0; keep < EstimateMessages(msgs)+100; keep += 97 {
		cut := PlanCut(msgs, keep)
		checkCut(t, msgs, cut)
		if cut < len(msgs) && msgs[cut].Role == messages.RoleTool {
			t.Fatalf("keep %d: the kept part starts with a tool result", keep)
		}
	}
}

func TestPlanCutInsideOneRun(t *testing.T) {
	// One user message, then tool steps: no turn boundary near the end, so the cut falls before
	// an assistant message.
	msgs := []messages.ChatMessage{user("start")}
	for i := range 6 {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, assistant("step", id), result(id, strings.Repeat("r", 4000)))
	}
	step := EstimateMessages(msgs[1:3])
	if got := PlanCut(msgs, 2*step+10); got != 9 || msgs[got].Role != messages.RoleAssistant {
		t.Errorf("PlanCut inside a run = %d, want 9 (before the second-to-last step)", got)
	}
}

func TestPlanCutRandomTranscripts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		var msgs []messages.ChatMessage
		for len(msgs) < 40 {
			switch r.IntN(3) {
			case 0:
				msgs = append(msgs, user(strings.Repeat("u", r.IntN(3000))))
			case 1:
				k := 1 + r.IntN(3)
				var ids []string
				for j := range k {
					ids = append(ids, fmt.Sprintf("t%d_%d_%d", n, len(msgs), j))
				}
				msgs = append(msgs, assistant("", ids...))
				for _, id := range ids {
					msgs = append(msgs, result(id, strings.Repeat("x", r.IntN(4000))))
				}
			default:
				msgs = append(msgs, assistant(strings.Repeat("a", r.IntN(2000))))
			}
		}
		keep := r.IntN(EstimateMessages(msgs))
		cut := PlanCut(msgs, keep)
		checkCut(t, msgs, cut)
		if cut == 0 {
			t.Fatalf("transcript %d: nothing summarized although every user message is a safe cut", n)
		}
	}
}

func TestPlanCutNothingSafe(t *testing.T) {
	msgs := []messages.ChatMessage{assistant("", "a"), result("a", "x")}
	if got := PlanCut(msgs[:1], 0); got != 0 {
		t.Errorf("PlanCut of an unanswered call = %d, want 0", got)
	}
	if got := PlanCut(msgs, 0); got != 2 {
		t.Errorf("PlanCut of one answered call with keep 0 = %d, want 2", got)
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		window, reserve int
	}{
		{16000, 4000}, {32000, 8000}, {64000, 16000}, {128000, 25600}, {200000, 40000}, {1_048_576, 209_715},
	}
	for _, tt := range tests {
		if got := DefaultReserveTokens(tt.window); got != tt.reserve {
			t.Errorf("DefaultReserveTokens(%d) = %d, want %d", tt.window, got, tt.reserve)
		}
	}
	small := ContextBudget{Window: 16000, Reserve: 4000, Fixed: 3000}
	if got := small.KeepRecent(0); got != 4500 {
		t.Errorf("KeepRecent in a 16k window = %d, want 4500 (half of the 9000 left)", got)
	}
	if got := small.SummaryTokens(); got != 2250 {
		t.Errorf("SummaryTokens in a 16k window = %d, want 2250", got)
	}
	large := ContextBudget{Window: 200000, Reserve: 40000, Fixed: 5000}
	if got := large.KeepRecent(0); got != DefaultKeepRecentTokens {
		t.Errorf("KeepRecent in a 200k window = %d, want the default %d", got, DefaultKeepRecentTokens)
	}
	if got := large.KeepRecent(30000); got != 30000 {
		t.Errorf("KeepRecent(30000) = %d", got)
	}
	if got := large.SummaryTokens(); got != 8192 {
		t.Errorf("SummaryTokens in a 200k window = %d, want the cap 8192", got)
	}
	// After a compaction the request must fit: fixed + summary + kept stays under the limit.
	if total := small.Fixed + small.SummaryTokens() + small.KeepRecent(0); total > small.Limit() {
		t.Errorf("after a compaction a 16k request holds %d tokens, over the limit %d", total, small.Limit())
	}
	if got := small.SummaryChunkTokens(800); got != 16000-4000-800-2250 {
		t.Errorf("SummaryChunkTokens = %d", got)
	}
}

func TestChunkMessages(t *testing.T) {
	var msgs []messages.ChatMessage
	for i := range 10 {
		msgs = append(msgs, user(fmt.Sprintf("%d %s", i, strings.Repeat("w", 4000)))) // ~1000 tokens each
	}
	msgs = append(msgs, user(strings.Repeat("huge ", 4000)))
	chunks := ChunkMessages(msgs, 3500)
	var flat []messages.ChatMessage
	for i, c := range chunks {
		if n := EstimateMessages(c); n > 3500 && len(c) > 1 {
			t.Errorf("chunk %d holds %d tokens in %d messages, over the budget", i, n, len(c))
		}
		flat = append(flat, c...)
	}
	if len(flat) != len(msgs) {
		t.Fatalf("chunks hold %d messages, want %d", len(flat), len(msgs))
	}
	for i := range msgs {
		if flat[i].Content != msgs[i].Content {
			t.Fatalf("message %d out of order", i)
		}
	}
	if len(chunks) != 5 {
		t.Errorf("got %d chunks, want 5 (3+3+3+1 and the huge one alone)", len(chunks))
	}
}

func TestSummaryInput(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	msgs := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "Deploy PRJ-7731 to https://example.com/x", Time: at},
		assistant("Checking", "c1"),
		{Role: messages.RoleTool, ToolCallID: "c1", ToolName: "exec", Content: "exit 1", IsError: true},
		user(strings.Repeat("long ", 5000)),
	}
	in := SummaryInput("Earlier: the user is Ana.", msgs, 1000)
	for _, want := range []string{
		"<previous-summary>\nEarlier: the user is Ana.\n</previous-summary>",
		"[user 2026-11-22 09:30 UTC]\nDeploy PRJ-7731 to https://example.com/x",
		`(calls tool read with {"path":"a.txt"})`,
		"[tool result exec (error)]\nexit 1",
		"characters left out",
		"merged with this conversation",
	} {
		if !strings.Contains(in, want) {
			t.Errorf("summary input lacks %q", want)
		}
	}
	if n := EstimateTokens(in); n > 1600 {
		t.Errorf("summary input holds %d tokens; the long message was not shortened", n)
	}
	if in := SummaryInput("", msgs[:1], 1000); strings.Contains(in, "previous-summary") || !strings.HasSuffix(in, "Write the summary now.") {
		t.Errorf("summary input without a previous summary = %q", in)
	}
}

func TestSummarySystemPrompt(t *testing.T) {
	p := SummarySystemPrompt("focus on the budget numbers", 2000)
	for _, want := range []string{"word for word", "identifiers", "pending asks and TODOs", "open decisions", "previous summary",
		"At most about 2000 tokens", "focus on the budget numbers", "not instructions to you"} {
		if !strings.Contains(p, want) {
			t.Errorf("summary prompt lacks %q", want)
		}
	}
	if strings.Contains(SummarySystemPrompt("  ", 100), "instructions (they") {
		t.Error("empty instructions were added")
	}
}

func TestSummaryEntry(t *testing.T) {
	e := SummaryEntry("the user is Ana", time.Time{})
	got, ok := SummaryOf(e)
	if !ok || got != "the user is Ana" {
		t.Errorf("SummaryOf(SummaryEntry) = %q, %v", got, ok)
	}
	if _, ok := SummaryOf(user(SummaryPrefix + "x")); ok {
		t.Error("a user message is taken for a summary")
	}
}

func TestMemoryFlushPrompt(t *testing.T) {
	loc := time.FixedZone("UTC+9", 9*3600)
	p := MemoryFlushPrompt(time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC).In(loc))
	if !strings.Contains(p, "memory/2026-11-23.md") || !strings.Contains(p, SilentToken) {
		t.Errorf("flush prompt = %q, want the local date's file and the silent token", p)
	}
}

func TestFormatTokens(t *testing.T) {
	for n, want := range map[int]string{850: "850", 12_345: "12k", 128_000: "128k", 1_047_576: "1.0M", 999: "999", 1499: "1k"} {
		if got := FormatTokens(n); got != want {
			t.Errorf("FormatTokens(%d) = %q, want %q", n, got, want)
		}
	}
}
