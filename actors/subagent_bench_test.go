package actors_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/sessions"
)

// BenchmarkSubagentArchive measures what a finished sub-agent costs in memory. n chats each
// delegate their message (sessions_spawn and sessions_yield in one model call, the child's
// answer, the parent's answer) on a durable bolt store; the Go heap (after runtime.GC and
// debug.FreeOSMemory) is read when every child has finished and was unloaded but is still in
// its archive window, with the parents live (window-live) and unloaded (window-passive), and
// once every child is archived (archived; the window is a year here, not the default hour). The same n chats with one plain message each give
// what a conversation without a child costs at the same stages; the difference per chat is
// the child's. Run it with -benchtime 1x (REEF_BENCH_CHATS changes n, default 2,000).
func BenchmarkSubagentArchive(b *testing.B) {
	chats := 2000
	if n, err := strconv.Atoi(os.Getenv("REEF_BENCH_CHATS")); err == nil {
		chats = n
	}
	if os.Getenv("REEF_HEAP_PROFILE") != "" {
		runtime.MemProfileRate = 256 // a profile that accounts for small objects
	}
	for range b.N {
		plainLive, plainPassive := plainCost(b, chats)
		r := newPassRigWith(b, openBenchStore(b), delegating)
		r.mu.Lock()
		r.replies = nil
		r.mu.Unlock()
		r.touch(0, 1, 1) // warm up: one delegation
		r.passivateAll()
		base := measure()
		writeHeapProfile(os.Getenv("REEF_HEAP_PROFILE"), "base")

		r.touch(1, chats, 64)
		awaitChildrenUnloaded(b, r)
		inWindow := func(l subagent.Link) bool { return l.Status == messages.SubagentCompleted && l.Archived.IsZero() }
		if n := countLinks(b, r.store, inWindow); n != chats+1 {
			b.Fatalf("%d children completed and not archived, want %d (one a chat)", n, chats+1)
		}
		live := measure()
		rounds := r.passivateAll()
		passive := measure()
		if n := countLinks(b, r.store, inWindow); n != chats+1 {
			b.Fatalf("%d children completed and not archived after passivation (%d clock jumps), want %d", n, rounds, chats+1)
		}

		r.clock.Advance(benchArchiveAfter + time.Minute)
		deadline := time.Now().Add(time.Minute)
		for countLinks(b, r.store, func(l subagent.Link) bool { return !l.Archived.IsZero() }) < chats+1 {
			if time.Now().After(deadline) {
				b.Fatal("the children were not all archived within a minute")
			}
			r.rt.Sweep()
			time.Sleep(10 * time.Millisecond)
		}
		r.passivateAll()
		archived := measure()
		writeHeapProfile(os.Getenv("REEF_HEAP_PROFILE"), "archived")

		per := func(m memSample) float64 { return float64(int64(m.heap)-int64(base.heap)) / float64(chats) }
		b.ReportMetric(per(live), "B/delegation-window-live")
		b.ReportMetric(plainLive, "B/plain-chat-live")
		b.ReportMetric(per(live)-plainLive, "B/child-window-live")
		b.ReportMetric(per(passive)-plainPassive, "B/child-window-passive")
		b.ReportMetric(per(archived)-plainPassive, "B/child-archived")
		b.Logf("heap MB: base %.2f, window live %.2f, window passive %.2f, archived %.2f; plain chats: %.0f B live, %.0f B passive each",
			mb(base.heap), mb(live.heap), mb(passive.heap), mb(archived.heap), plainLive, plainPassive)
		r.stop()
	}
}

// plainCost returns the heap per chat, live and after passivation, of chats conversations
// with one plain message each, on the same rig.
func plainCost(b *testing.B, chats int) (live, passive float64) {
	r := newPassRig(b, openBenchStore(b))
	r.mu.Lock()
	r.replies = nil
	r.mu.Unlock()
	r.touch(0, 1, 1)
	r.passivateAll()
	base := measure()
	r.touch(1, chats, 64)
	l := measure()
	r.passivateAll()
	p := measure()
	r.stop()
	return float64(int64(l.heap)-int64(base.heap)) / float64(chats), float64(int64(p.heap)-int64(base.heap)) / float64(chats)
}

func openBenchStore(b *testing.B) persistence.Store {
	store, err := bolt.Open(filepath.Join(b.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return store
}

// benchArchiveAfter is the archive window of the benchmark: a year, so that passivateAll's
// clock jumps (10 minutes each, as many as it takes) stay inside it.
const benchArchiveAfter = 365 * 24 * time.Hour

// delegating gives the rig's agent the session tools (granted to the fake channel's guests)
// and a model that delegates every message to one child.
func delegating(a *actors.Agent, script *fakellm.Script, deps *actors.Deps) {
	reg, err := tools.NewRegistry(sessions.Tools()...)
	if err != nil {
		panic(err)
	}
	a.Tools, a.Subagents.ArchiveAfter = reg, benchArchiveAfter
	a.Policy, _ = tools.NewPolicy(nil, nil, reg.Names())
	grants, _ := tools.NewGuestPolicy(tools.GuestRules{Channel: tools.Grant{Allow: []string{tools.All}}}, reg.Names())
	deps.ToolGrants = map[string]*tools.GuestPolicy{"fake": grants}
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			return fakellm.Reply{Text: "the child's result"}
		case len(completions(req)) > 0:
			return fakellm.Reply{Text: "the final answer"}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("s", subagent.ToolSpawn, map[string]string{"task": "collect the facts", "label": "worker"}),
			call("y", subagent.ToolYield, map[string]string{"message": "waiting"})}}
	}
}

// awaitChildrenUnloaded waits until no sub-agent Session is live or not yet terminated.
func awaitChildrenUnloaded(b *testing.B, r *passRig) {
	deadline := time.Now().Add(time.Minute)
	for {
		live, left := r.rt.SessionCounts()
		if left == live && !slices.ContainsFunc(r.rt.LiveSessionKeys(), subagent.IsKey) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("children still loaded: %d live sessions, %d actors", live, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func countLinks(b *testing.B, store persistence.Store, match func(subagent.Link) bool) int {
	var all map[string]subagent.Link
	if err := store.View(func(r persistence.Reader) error {
		var err error
		all, err = subagent.All(r)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, l := range all {
		if match(l) {
			n++
		}
	}
	return n
}
