package actors_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
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
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
	"github.com/reefgw/reef/tools/fs"
)

// timerOpts build a harness whose Timer runs on a fake clock, with the cron tool, and where
// the fake channel's chat "42" is the owner.
type timerOpts struct {
	script    *fakellm.Script
	clock     *testutil.Clock
	timer     actors.TimerSettings
	workspace string
	dbPath    string
	session   actors.SessionSettings
	now       bool          // sessions read the fake clock too (Deps.Now)
	access    *access.Rules // replaces the default: an allowlist of the owner "42"
}

func newTimerHarness(t *testing.T, o timerOpts) *harness {
	t.Helper()
	if o.workspace == "" {
		o.workspace = t.TempDir()
	}
	if o.dbPath == "" {
		o.dbPath = filepath.Join(t.TempDir(), "reef.db")
	}
	if o.script == nil {
		o.script = fakellm.NewScript()
	}
	if o.timer.PollEvery == 0 {
		o.timer.PollEvery = 5 * time.Millisecond
	}
	reg, err := tools.NewRegistry(append(fs.Tools(fs.Config{}), cron.New())...)
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := tools.NewPolicy(nil, nil, reg.Names())
	store, err := bolt.Open(o.dbPath, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: o.workspace, Model: "fake/test-model",
		Provider: fakellm.New(o.script), Tools: reg, Policy: policy, ContextWindow: 128000, Location: time.UTC}
	ch := fake.New()
	deps := &actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"fake": ch}, Clock: o.clock, Session: o.session,
		Access: map[string]*access.Rules{"fake": {DMPolicy: "allowlist", AllowFrom: []string{"42"}}}}
	if o.access != nil {
		deps.Access["fake"] = o.access
	}
	if o.now {
		deps.Now = o.clock.Now
	}
	rt, err := actors.Start(deps, actors.WithTimer(o.timer))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, rt: rt, ch: ch, store: store, dbPath: o.dbPath, deps: deps, agent: ag}
	t.Cleanup(h.stop)
	return h
}

// cronDo runs a cron action as the operator and decodes the answer into out (if not nil).
func cronDo(t *testing.T, h *harness, action string, args any, out any) error {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	res, err := h.rt.Cron(ctx, action, raw)
	if err == nil && out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatalf("cron %s: %v in %s", action, err, res)
		}
	}
	return err
}

// waitFor polls cond (bounded) and fails the test with what when it never holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testutil.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// settleClock fires what is due at the fake now once the Timer armed it, and waits until the
// Timer's next wake-up lies in the future.
func settleClock(t *testing.T, c *testutil.Clock) {
	t.Helper()
	waitUntil(t, "the timer to arm", func() bool {
		next, ok := c.Next()
		if ok && !next.After(c.Now()) {
			c.Advance(0)
			return false
		}
		return ok
	})
}

// runs reads a job's recorded runs.
func storedRuns(t *testing.T, store persistence.Store, prefix string) int {
	t.Helper()
	n := 0
	if err := store.View(func(r persistence.Reader) error {
		return r.Scan("cron/runs", prefix, func(string, []byte) error { n++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// systemEvents returns the system entries of a session's transcript whose text contains marker.
func systemEvents(t *testing.T, store persistence.Store, key, marker string) []string {
	t.Helper()
	var out []string
	if err := store.View(func(r persistence.Reader) error {
		entries, err := r.Messages(key, 0)
		for _, e := range entries {
			if e.Role == messages.RoleSystem && strings.Contains(e.Content, marker) {
				out = append(out, e.Content)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func inboxEmpty(t *testing.T, store persistence.Store, key string) bool {
	var n int
	store.View(func(r persistence.Reader) error {
		items, err := r.Inbox(key)
		n = len(items)
		return err
	})
	return n == 0
}

// jsonUnmarshal decodes a tool result's JSON, unwrapped from its untrusted-data markers.
func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(unwrapped(s)), v) }

// unwrapped returns the text between a tool result's untrusted-data markers (s itself when it
// has none).
func unwrapped(s string) string {
	if !strings.HasPrefix(s, "<<<UNTRUSTED ") {
		return s
	}
	_, body, _ := strings.Cut(s, ">>>\n")
	if i := strings.LastIndex(body, "\n<<<END_UNTRUSTED id="); i >= 0 {
		body = body[:i]
	}
	return body
}

// timerIdle reports whether the Timer has no run in flight or waiting.
func timerIdle(t *testing.T, h *harness) bool {
	var st struct{ Running, Waiting int }
	if err := cronDo(t, h, "status", map[string]any{}, &st); err != nil {
		t.Fatal(err)
	}
	return st.Running == 0 && st.Waiting == 0
}
