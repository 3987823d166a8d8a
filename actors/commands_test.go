package actors_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

func (h *harness) expectNoInbox(chat string) {
	h.t.Helper()
	var n int
	h.store.View(func(r persistence.Reader) error {
		in, err := r.Inbox(h.key(chat))
		n = len(in)
		return err
	})
	if n != 0 {
		h.t.Errorf("inbox of %s holds %d entries, want 0", chat, n)
	}
}

// TestStopDuringHungStream: /stop cancels a run whose model stream hangs within a second,
// and the next message is answered.
func TestStopDuringHungStream(t *testing.T) {
	for _, word := range []string{"/stop", "stop"} {
		t.Run(word, func(t *testing.T) {
			g, script := newGate(t)
			h := newHarness(t, harnessOpts{script: script})
			h.say("1", "think forever")
			g.next() // the model has the request (a cancel before it would leave the hang unplayed)
			g.answer(fakellm.Reply{Hang: true})
			begin := time.Now()
			h.say("1", word)
			if out := h.reply(); out.Text != "Stopped." {
				t.Fatalf("reply = %q, want Stopped.", out.Text)
			}
			if d := time.Since(begin); d > time.Second {
				t.Errorf("stopping took %s, want under 1s", d)
			}
			h.say("1", "hello")
			g.next()
			g.answer(fakellm.Reply{Text: "hello again"})
			if out := h.reply(); out.Text != "hello again" {
				t.Fatalf("reply = %q", out.Text)
			}
			for _, e := range h.transcript("1") {
				if strings.Contains(e.Content, word+"\n") || e.Content == word {
					t.Errorf("the command %q reached the transcript", word)
				}
			}
			h.expectNoInbox("1")
		})
	}
}

// TestNewSession: /new answers without a model call; the next run sees none of the old
// conversation, opens with the start routine (yesterday's and today's notes) and the old
// transcript stays stored. "1" is the owner: the daily notes are the owner's (#39).
func TestNewSession(t *testing.T) {
	ws := t.TempDir()
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.Local)
	os.MkdirAll(filepath.Join(ws, "memory"), 0o755)
	os.WriteFile(filepath.Join(ws, "memory", "2026-11-21.md"), []byte("Yesterday: booked the dentist."), 0o644)
	os.WriteFile(filepath.Join(ws, "memory", "2026-11-22.md"), []byte("Today: call mum."), 0o644)
	script := fakellm.NewScript(fakellm.Reply{Text: "noted"}, fakellm.Reply{Text: "Hi! Fresh start."}, fakellm.Reply{Text: "again"})
	h := newHarness(t, harnessOpts{script: script, workspace: ws, now: func() time.Time { return now },
		access: &access.Rules{DMPolicy: "allowlist", AllowFrom: []string{"1"}}})

	h.say("1", "my secret project is ZEPHYR-7")
	h.reply()
	h.say("1", "/new")
	if out := h.reply(); !strings.HasPrefix(out.Text, "New session started.") {
		t.Fatalf("/new reply = %q", out.Text)
	}
	if n := len(script.Requests()); n != 1 {
		t.Fatalf("%d model calls after /new, want 1 (no call for the command)", n)
	}
	h.say("1", "hello")
	h.reply()
	req := script.Requests()[1]
	var start string
	for _, m := range req.Messages {
		if strings.Contains(m.Content, "ZEPHYR-7") {
			t.Errorf("the new session's request holds the old conversation: %q", m.Content)
		}
		if m.Role == messages.RoleSystem && strings.Contains(m.Content, "new session") {
			start = m.Content
		}
	}
	for _, want := range []string{"Greet the user", "booked the dentist", "call mum"} {
		if !strings.Contains(start, want) {
			t.Errorf("start routine %q lacks %q", start, want)
		}
	}
	h.say("1", "more")
	h.reply()
	for _, m := range script.Requests()[2].Messages {
		if strings.Contains(m.Content, "booked the dentist") && m.Role == messages.RoleSystem &&
			strings.Count(fmt.Sprint(script.Requests()[2].Messages), "booked the dentist") > 1 {
			t.Error("the notes were prepended more than once")
		}
	}
	if !hasText(entryTexts(h.transcript("1")), "ZEPHYR-7") {
		t.Error("the old conversation is no longer stored")
	}
	h.expectNoInbox("1")
}

func entryTexts(entries []persistence.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Content
	}
	return out
}

// TestGuestModelChoices: a guest may choose only among the agent's models and may not raise
// the thinking level; with session.guestModels none not even that; the owner chooses freely
// (#39 item 9).
func TestGuestModelChoices(t *testing.T) {
	for _, mode := range []string{"", actors.GuestModelsNone} {
		script := fakellm.NewScript()
		h := newHarness(t, harnessOpts{script: script, session: actors.SessionSettings{GuestModels: mode},
			access: &access.Rules{DMPolicy: "open", AllowFrom: []string{"*", "owner"}},
			agentHook: func(a *actors.Agent) {
				a.Models = []string{"fake/big-model"}
				a.ModelFor = func(label string) (actors.ModelChoice, error) {
					return actors.ModelChoice{Label: label, Provider: fakellm.New(script), ContextWindow: 200000}, nil
				}
			}})
		steps := []struct{ who, say, want string }{
			{"guest", "/model fake/o1-pro-unlisted", "Unknown model"},
			{"guest", "/new fake/o1-pro-unlisted", "Unknown model"},
			{"guest", "/think high", "Only the owner"},
			{"guest", "/think medium", "Only the owner"},
			{"guest", "/model big-model", "Model set to fake/big-model"},
			{"guest", "/think low", "Thinking set to low"},
			{"owner", "/model fake/o1-pro-unlisted", "Model set to fake/o1-pro-unlisted"},
			{"owner", "/think high", "Thinking set to high"},
		}
		if mode == actors.GuestModelsNone {
			steps[0].want, steps[1].want = "Only the owner", "Only the owner"
			steps[4].want, steps[5].want = "Only the owner", "Only the owner"
		}
		for _, s := range steps {
			h.inject(messages.Inbound{ChatID: s.who, SenderID: s.who, ChatType: messages.ChatDirect, Text: s.say})
			if out := h.reply(); !strings.Contains(out.Text, s.want) {
				t.Errorf("guestModels %q: %s says %s → %q, want %q", mode, s.who, s.say, out.Text, s.want)
			}
		}
	}
}

// TestSessionSettingsCommands: /model, /think, /reasoning and /status change and show the
// session's settings, which the next run uses and which survive a restart.
func TestSessionSettingsCommands(t *testing.T) {
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "answer from " + r.Model, Reasoning: "I thought about it."}
	}
	other := fakellm.New(script)
	dbPath := filepath.Join(t.TempDir(), "reef.db")
	opts := harnessOpts{script: script, dbPath: dbPath, agentHook: func(a *actors.Agent) {
		a.Models = []string{"fake/big-model", "fake/tiny-model"}
		a.ModelFor = func(label string) (actors.ModelChoice, error) {
			switch label {
			case "fake/big-model":
				return actors.ModelChoice{Label: label, Provider: other, ContextWindow: 200000}, nil
			case "fake/tiny-model":
				return actors.ModelChoice{Label: label, Provider: other, ContextWindow: 8000}, nil
			}
			return actors.ModelChoice{}, fmt.Errorf("no provider for %s", label)
		}
	}, access: &access.Rules{DMPolicy: "allowlist", AllowFrom: []string{"1"}}} // "1" is the owner
	h := newHarness(t, opts)

	steps := []struct{ say, want string }{
		{"/help", "/queue steer|followup|collect|interrupt"},
		{"/model", "Available: fake/test-model, fake/big-model, fake/tiny-model"},
		{"/model tiny-model", "context window is 8k tokens"},
		{"/model nope", "Unknown model"},
		{"/model big-model", "Model set to fake/big-model"},
		{"/think high", "Thinking set to high"},
		{"/think sideways", "Use /think"},
		{"/reasoning on", "Reasoning will be shown"},
		{"/queue collect cap:5", "collect, 0 waiting (cap 5, drop summarize, debounce 500ms)"},
		{"/status", "Model: fake/big-model (think: high, reasoning: shown)"},
		{"/reset", "New session started. Model: fake/big-model."},
	}
	for _, s := range steps {
		h.say("1", s.say)
		if out := h.reply(); !strings.Contains(out.Text, s.want) {
			t.Errorf("%s → %q, want it to contain %q", s.say, out.Text, s.want)
		}
	}
	if n := len(script.Requests()); n != 0 {
		t.Fatalf("commands made %d model calls", n)
	}
	h.say("1", "hi")
	if out := h.reply(); out.Text != "Reasoning:\nI thought about it.\n\n---\n\nanswer from big-model" {
		t.Errorf("reply = %q, want the reasoning, then the answer", out.Text)
	}
	if r := script.Requests()[0]; r.Model != "big-model" || r.Reasoning != "high" {
		t.Errorf("request model %q reasoning %q, want big-model high", r.Model, r.Reasoning)
	}

	h.stop() // settings survive a restart
	opts.editable = nil
	h = newHarness(t, opts)
	if st := h.settled("1"); !strings.Contains(st, "fake/big-model (think: high") || !strings.Contains(st, "Tokens used") {
		t.Errorf("status after restart = %q", st)
	}
}

// TestCommandsOnlyFromAllowedSenders: in a group, a command from someone the allowlist does
// not name ("/new", "/status@reef_bot") gets a short refusal and never becomes a model turn
// (#33 point 6); from an allowlisted sender it is a command. The stranger's other messages
// still reach the model.
func TestCommandsOnlyFromAllowedSenders(t *testing.T) {
	script := fakellm.NewScript()
	h := newHarness(t, harnessOpts{script: script, access: &access.Rules{DMPolicy: "open",
		AllowFrom: []string{"*", "boss"}, Groups: []string{"g1"}, RequireMention: false}})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	say := func(sender, text string) {
		t.Helper()
		err := h.ch.Inject(ctx, messages.Inbound{ChatID: "g1", ChatType: messages.ChatGroup, SenderID: sender,
			Text: text, Mentioned: true})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, text := range []string{"/new", "/status@reef_bot", "@reef_bot /model big"} {
		say("stranger", text)
		if out := h.reply(); !strings.Contains(out.Text, "not sent to the model") {
			t.Fatalf("stranger's %q → %q, want a short refusal", text, out.Text)
		}
	}
	if n := len(script.Requests()); n != 0 {
		t.Fatalf("%d model calls after a stranger's commands, want none", n)
	}
	say("stranger", "what is the weather?")
	if out := h.reply(); out.Text != "ok" {
		t.Fatalf("stranger's message → %q, want an ordinary answer", out.Text)
	}
	say("boss", "/new@reef_bot")
	if out := h.reply(); !strings.HasPrefix(out.Text, "New session started.") {
		t.Fatalf("boss's /new → %q", out.Text)
	}
	if n := len(script.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
}

// TestNewDuringRun: /new stops the running run without a "Stopped.", and a message sent
// after it belongs to the new session.
func TestNewDuringRun(t *testing.T) {
	g, script := newGate(t)
	h := newHarness(t, harnessOpts{script: script})
	h.say("1", "long task about PROJECT-OLD")
	g.next()
	g.answer(fakellm.Reply{Hang: true})
	h.say("1", "/new")
	h.say("1", "hello after")
	if out := h.reply(); !strings.HasPrefix(out.Text, "New session started.") {
		t.Fatalf("reply = %q, want the /new answer first and no Stopped.", out.Text)
	}
	req := g.next()
	if fmt.Sprint(req.Messages) != "" && strings.Contains(fmt.Sprint(req.Messages), "PROJECT-OLD") {
		t.Errorf("the new session's request holds the old run: %v", req.Messages)
	}
	if users := userTexts(req); len(users) != 1 || !strings.Contains(users[0], "hello after") {
		t.Errorf("users = %q", users)
	}
	g.answer(fakellm.Reply{Text: "hi"})
	if out := h.reply(); out.Text != "hi" {
		t.Fatalf("reply = %q", out.Text)
	}
	if !hasText(entryTexts(h.transcript("1")), "PROJECT-OLD") {
		t.Error("the stopped run's message is not stored")
	}
}

// TestNewWithUnknownModelKeepsTheRun: "/new <model>" with a model that cannot be used is
// refused without stopping the running run.
func TestNewWithUnknownModelKeepsTheRun(t *testing.T) {
	g, script := newGate(t)
	h := newHarness(t, harnessOpts{script: script})
	h.say("1", "work on it")
	g.next()
	h.say("1", "/new no-such-model")
	if out := h.reply(); !strings.Contains(out.Text, "Unknown model") && !strings.Contains(out.Text, "Cannot use") {
		t.Fatalf("reply = %q, want the model refused", out.Text)
	}
	g.answer(fakellm.Reply{Text: "finished"})
	if out := h.reply(); out.Text != "finished" {
		t.Fatalf("reply = %q, want the run's answer", out.Text)
	}
}

// TestNewSessionGreets: with GreetOnNew, /new is answered and then the agent greets at once
// in one model turn that opens the new session (start routine and the greeting request);
// the next message is an ordinary run. Without it (TestNewSession) nothing is called.
func TestNewSessionGreets(t *testing.T) {
	script := fakellm.NewScript(fakellm.Reply{Text: "noted"}, fakellm.Reply{Text: "Ahoy! What shall we do today?"},
		fakellm.Reply{Text: "sure"})
	h := newHarness(t, harnessOpts{script: script, session: actors.SessionSettings{GreetOnNew: true}})
	h.say("1", "remember ZEPHYR-7")
	h.reply()
	h.say("1", "/reset")
	if out := h.reply(); !strings.HasPrefix(out.Text, "New session started.") {
		t.Fatalf("/reset reply = %q", out.Text)
	}
	if out := h.reply(); out.Text != "Ahoy! What shall we do today?" {
		t.Fatalf("greeting = %q", out.Text)
	}
	if n := len(script.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (one for the greeting)", n)
	}
	var greet, start bool
	for _, m := range script.Requests()[1].Messages {
		if strings.Contains(m.Content, "ZEPHYR-7") {
			t.Errorf("the greeting's request holds the old conversation: %q", m.Content)
		}
		greet = greet || (m.Role == messages.RoleSystem && strings.Contains(m.Content, "[New session]"))
		start = start || (m.Role == messages.RoleSystem && strings.Contains(m.Content, "A new session was started"))
	}
	if !greet || !start {
		t.Errorf("greeting request: greeting asked %v, start routine %v; want both", greet, start)
	}
	h.say("1", "hello")
	if out := h.reply(); out.Text != "sure" {
		t.Fatalf("reply = %q", out.Text)
	}
	starts := 0
	for _, m := range script.Requests()[2].Messages {
		if m.Role == messages.RoleSystem && strings.Contains(m.Content, "A new session was started") {
			starts++
		}
	}
	if starts != 1 {
		t.Errorf("the next run's request holds the start routine %d times, want once (from the greeting's run)", starts)
	}
	h.expectNoInbox("1")
}
