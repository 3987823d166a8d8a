package actors_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/fs"
)

// harness is a running actor tree on a real bolt store, with a fake channel named "fake".
type harness struct {
	t      testing.TB
	rt     *actors.Runtime
	ch     *fake.Channel
	store  *bolt.Store
	dbPath string
	deps   *actors.Deps
	agent  *actors.Agent
}

type harnessOpts struct {
	provider  providers.Provider
	script    *fakellm.Script // used with the in-process fake when provider is nil
	workspace string
	dbPath    string
	allow     []string
	deny      []string
	extra     []tools.Tool
	limits    actors.Limits
	now       func() time.Time
	idle      time.Duration
	access    *access.Rules
	// guests are the fake channel's tool grants to guests; nil gives guests every tool (tests
	// of other things run as guests: without access rules nobody on the fake channel is the owner).
	guests    *tools.GuestRules
	editable  *fake.Editable  // use this platform (it keeps chats across harnesses) instead of a plain fake
	clock     *testutil.Clock // drives Deps.Now and Deps.Clock
	agentHook func(*actors.Agent)
	session   actors.SessionSettings                    // idle, when set, replaces its IdleAfter
	channel   string                                    // the fake channel's name, default "fake"
	wrapStore func(persistence.Store) persistence.Store // what the actors see of the store
	approvals actors.ApprovalSettings                   // exec approvals; the zero value never asks
	depsHook  func(*actors.Deps)                        // changes the Deps before the tree starts
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	if o.workspace == "" {
		o.workspace = t.TempDir()
	}
	if o.dbPath == "" {
		o.dbPath = filepath.Join(t.TempDir(), "reef.db")
	}
	if o.provider == nil {
		if o.script == nil {
			o.script = fakellm.NewScript()
		}
		o.provider = fakellm.New(o.script)
	}
	reg, err := tools.NewRegistry(append(append(fs.Tools(fs.Config{}), exec.New(exec.Config{})), o.extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := tools.NewPolicy(o.allow, o.deny, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	guests := tools.GuestRules{Channel: tools.Grant{Allow: []string{tools.All}}}
	if o.guests != nil {
		guests = *o.guests
	}
	grants, err := tools.NewGuestPolicy(guests, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	store, err := bolt.Open(o.dbPath, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: o.workspace, Model: "fake/test-model",
		Provider: o.provider, Tools: reg, Policy: policy, ContextWindow: 128000, Limits: o.limits}
	ch := fake.New()
	var platform channels.Channel = ch
	if o.editable != nil {
		ch, platform = o.editable.Channel, o.editable
	}
	if o.agentHook != nil {
		o.agentHook(ag)
	}
	if o.idle != 0 {
		o.session.IdleAfter = o.idle
	}
	if o.channel == "" {
		o.channel = "fake"
	}
	var seen persistence.Store = store
	if o.wrapStore != nil {
		seen = o.wrapStore(store)
	}
	deps := &actors.Deps{Log: testutil.Logger(t), Store: seen, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{o.channel: platform}, Now: o.now, Session: o.session,
		ToolGrants: map[string]*tools.GuestPolicy{o.channel: grants}, Approvals: o.approvals,
		Streaming: plainDrafts(o.channel)}
	if o.clock != nil {
		deps.Now, deps.Clock = o.clock.Now, o.clock
	}
	if o.access != nil {
		deps.Access = map[string]*access.Rules{"fake": o.access}
	}
	if o.depsHook != nil {
		o.depsHook(deps)
	}
	rt, err := actors.Start(deps)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, rt: rt, ch: ch, store: store, dbPath: o.dbPath, deps: deps, agent: ag}
	t.Cleanup(h.stop)
	return h
}

// stop shuts the tree down and closes the store (idempotent).
func (h *harness) stop() {
	if h.rt == nil {
		return
	}
	if err := h.rt.Stop(10 * time.Second); err != nil {
		h.t.Error(err)
	}
	if err := h.store.Close(); err != nil {
		h.t.Error(err)
	}
	h.rt = nil
}

func (h *harness) say(chat, text string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	if err := h.ch.Inject(ctx, messages.Inbound{ChatID: chat, Text: text}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) reply() messages.Outbound {
	h.t.Helper()
	return testutil.Receive(h.t, h.ch.Sent)
}

func (h *harness) key(chat string) string {
	return sessionkey.For("main", "", &messages.Inbound{Channel: "fake", ChatID: chat, SenderID: chat, ChatType: messages.ChatDirect})
}

// transcript reads a session's stored entries.
func (h *harness) transcript(chat string) []persistence.Entry {
	h.t.Helper()
	var entries []persistence.Entry
	err := h.store.View(func(r persistence.Reader) error {
		var err error
		entries, err = r.Messages(h.key(chat), 0)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return entries
}

// checkPairs asserts every tool call in entries has exactly one result, and returns the results by call id.
func checkPairs(t *testing.T, entries []persistence.Entry) map[string]messages.ChatMessage {
	t.Helper()
	calls := map[string]bool{}
	results := map[string]messages.ChatMessage{}
	for _, e := range entries {
		for _, c := range e.ToolCalls {
			if calls[c.ID] {
				t.Errorf("tool call id %s appears twice", c.ID)
			}
			calls[c.ID] = true
		}
		if e.Role == messages.RoleTool {
			if _, dup := results[e.ToolCallID]; dup {
				t.Errorf("tool call %s has two results", e.ToolCallID)
			}
			results[e.ToolCallID] = e.ChatMessage
		}
	}
	for id := range calls {
		if _, ok := results[id]; !ok {
			t.Errorf("tool call %s has no result", id)
		}
	}
	for id := range results {
		if !calls[id] {
			t.Errorf("result for unknown tool call %s", id)
		}
	}
	return results
}

func call(id, name string, args any) messages.ToolCall {
	b, _ := json.Marshal(args)
	return messages.ToolCall{ID: id, Name: name, Arguments: string(b)}
}

// testTool is a tool whose behaviour a test supplies.
type testTool struct {
	name string
	run  func(ctx context.Context, c tools.Call) (tools.Result, error)
}

func (t *testTool) Spec() messages.ToolSpec {
	return messages.ToolSpec{Name: t.name, Description: "a test tool", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (t *testTool) Run(ctx context.Context, c tools.Call) (tools.Result, error) { return t.run(ctx, c) }

// heldTool is a tool that signals started when a call begins and returns content once
// release is closed (or the call is cancelled).
func heldTool(name, content string) (tool *testTool, started chan struct{}, release chan struct{}) {
	started, release = make(chan struct{}, 1), make(chan struct{})
	tool = &testTool{name: name, run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return tools.Result{Content: content}, nil
	}}
	return tool, started, release
}

// syncTool runs inside the ToolRun actor's Receive.
type syncTool struct{ testTool }

func (*syncTool) Synchronous() {}
