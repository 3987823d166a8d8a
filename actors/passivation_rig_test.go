package actors_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/sessionkey"
)

// passRig is an actor tree for passivation tests and benchmarks: a fake channel, the
// in-process fake provider, a fake clock for Deps.Now, and the store the caller chooses. Its
// model answers "noted token-N" to a message naming token-N, and "your token was token-N"
// to any later message once the history shows one.
type passRig struct {
	t      testing.TB
	rt     *actors.Runtime
	ch     *fake.Channel
	store  persistence.Store
	script *fakellm.Script
	clock  *testutil.Clock
	// onNow, when set, runs whenever an actor reads Deps.Now (fault injection).
	onNow atomic.Pointer[func()]

	mu      sync.Mutex
	replies map[string][]messages.Outbound // by chat id; nil: count replies only (benchmarks)
	arrived chan struct{}                  // one value per reply
	done    chan struct{}
}

const passIdle = 10 * time.Minute

var tokenRE = regexp.MustCompile(`token-\d+`)

func newPassRig(t testing.TB, store persistence.Store) *passRig {
	t.Helper()
	return newPassRigWith(t, store, nil)
}

// newPassRigWith is newPassRig with hook changing the agent, the script and the Deps before
// the tree starts.
func newPassRigWith(t testing.TB, store persistence.Store, hook func(*actors.Agent, *fakellm.Script, *actors.Deps)) *passRig {
	t.Helper()
	script := fakellm.NewScript()
	script.KeepRequests = 64
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		for i := range r.Messages[:len(r.Messages)-1] { // an earlier token wins: it is history
			if m := r.Messages[i]; m.Role == messages.RoleUser && tokenRE.MatchString(m.Content) {
				return fakellm.Reply{Text: "your token was " + tokenRE.FindString(m.Content)}
			}
		}
		if tok := tokenRE.FindString(r.Messages[len(r.Messages)-1].Content); tok != "" {
			return fakellm.Reply{Text: "noted " + tok}
		}
		return fakellm.Reply{Text: "ok"}
	}
	reg, policy := actors.NoTools(t)
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: fakellm.New(script), Tools: reg, Policy: policy, ContextWindow: 128000}
	r := &passRig{t: t, ch: fake.New(), store: store, script: script,
		clock:   testutil.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
		replies: map[string][]messages.Outbound{}, arrived: make(chan struct{}, 1<<17), done: make(chan struct{})}
	now := func() time.Time {
		if f := r.onNow.Load(); f != nil {
			(*f)()
		}
		return r.clock.Now()
	}
	deps := &actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"fake": r.ch}, Now: now, Clock: r.clock,
		Session: actors.SessionSettings{IdleAfter: passIdle}}
	// No heartbeats: the clock jumps by idle periods, and a heartbeat's run would be traffic.
	if hook != nil {
		hook(ag, script, deps)
	}
	noBeats := actors.TimerSettings{Heartbeats: map[string]actors.HeartbeatSettings{"main": {Every: -1}}}
	var err error
	if r.rt, err = actors.Start(deps, actors.WithTimer(noBeats)); err != nil {
		t.Fatal(err)
	}
	go r.collect()
	t.Cleanup(r.stop)
	return r
}

// collect files every reply under its chat, so fake.Channel's buffer never fills.
func (r *passRig) collect() {
	for {
		select {
		case out := <-r.ch.Sent:
			r.mu.Lock()
			if r.replies != nil {
				r.replies[out.ChatID] = append(r.replies[out.ChatID], out)
			}
			r.mu.Unlock()
			r.arrived <- struct{}{}
		case <-r.done:
			return
		}
	}
}

func (r *passRig) stop() {
	if r.rt == nil {
		return
	}
	if err := r.rt.Stop(30 * time.Second); err != nil {
		r.t.Error(err)
	}
	close(r.done)
	if err := r.store.Close(); err != nil {
		r.t.Error(err)
	}
	r.rt = nil
}

// touch sends "remember token-<i>" from chats first..first+n-1 (chat id i), workers at a
// time, and returns once every one was answered.
func (r *passRig) touch(first, n, workers int) {
	r.t.Helper()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := r.say(strconv.Itoa(i), fmt.Sprintf("remember token-%d", i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := first; i < first+n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		r.t.Fatal(err)
	default:
	}
	r.awaitReplies(n)
}

func (r *passRig) say(chat, text string) error {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	return r.ch.Inject(ctx, messages.Inbound{ChatID: chat, Text: text})
}

// awaitReplies waits for n more replies; the deadline is per reply.
func (r *passRig) awaitReplies(n int) {
	r.t.Helper()
	for range n {
		testutil.Receive(r.t, r.arrived)
	}
}

// chatReplies returns the texts chat was sent.
func (r *passRig) chatReplies(chat string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var texts []string
	for _, out := range r.replies[chat] {
		texts = append(texts, out.Text)
	}
	return texts
}

// awaitConfirmed waits until the replies the rig recorded are marked sent in their outboxes.
// A Session waits for that confirmation before it may be passivated, but only for
// unsentPatience (5 minutes), and passivateAll moves the clock by more than that at once: a
// confirmation still on its way would then be overtaken, and the respawned Session would send
// the reply again, as it must after a real 5-minute silence.
func (r *passRig) awaitConfirmed() {
	r.t.Helper()
	r.mu.Lock()
	var keys []string
	for chat := range r.replies {
		keys = append(keys, sessionkey.For("main", "", &messages.Inbound{Channel: "fake", ChatID: chat, SenderID: chat, ChatType: messages.ChatDirect}))
	}
	r.mu.Unlock()
	// The deadline is per session, not for all of them: under load (race detector, two shared
	// cores) 10,000 confirmations may take far longer than testutil.Timeout in all.
	for _, key := range keys {
		deadline := time.Now().Add(testutil.Timeout)
		for {
			var pending int
			err := r.store.View(func(rd persistence.Reader) error {
				rows, err := rd.Outbox(key)
				pending = len(rows)
				return err
			})
			if err != nil {
				r.t.Fatal(err)
			}
			if pending == 0 {
				break
			}
			if time.Now().After(deadline) {
				r.t.Fatalf("%s: %d replies never marked sent", key, pending)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// passivateAll moves the fake clock past the idle time and sweeps until no Session actor is
// left (live in the Router's map or still stopping). Sessions report idle after their reply
// left, so a round may find some not yet reported; each round waits for the Router to answer,
// so this does not spin ahead of it. The clock moves only while sessions are live, so a
// passivation takes few idle periods (and no 30-minute heartbeat fires in between).
//
// It fails when no Session stopped for testutil.Timeout, not after a fixed time in all:
// stopping 10,000 actors under the race detector on a loaded machine took over 20 s (a
// process at load 23 got a sixth of a core), yet a passivation that is stuck still fails.
func (r *passRig) passivateAll() (rounds int) {
	r.t.Helper()
	r.awaitConfirmed()
	deadline := time.Now().Add(testutil.Timeout)
	live, left := 1, -1
	for {
		if live > 0 {
			rounds++
			r.clock.Advance(passIdle + time.Second)
			r.rt.Sweep()
		}
		var actorsLeft int
		live, actorsLeft = r.rt.SessionCounts()
		if live == 0 && actorsLeft == 0 {
			return rounds
		}
		if actorsLeft >= 0 && (left < 0 || actorsLeft < left) { // progress: some Session actor ended
			left, deadline = actorsLeft, time.Now().Add(testutil.Timeout)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("after %d sweeps: %d sessions live, %d Session actors not terminated, none for %v",
				rounds, live, actorsLeft, testutil.Timeout)
		}
	}
}
