package actors

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// BenchmarkPassivationRespawn measures what a passivated conversation costs its next message:
// the real Session actor spawned under a stand-in Router, loading its info, a 100-message
// transcript, its inbox and outbox from a bolt file. load: spawn until the Session reports
// idle (loaded, nothing to do). first-turn: spawn with a message waiting, until the Session
// reports the run started (its Turn spawned). Stopping the Session is not timed.
func BenchmarkPassivationRespawn(b *testing.B) {
	for _, tc := range []struct {
		name  string
		until func(any) bool
		send  bool
	}{
		{"load", isMsg[*sessionIdle], false},
		{"first-turn", isMsg[*sessionBusy], true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rig := newRespawnRig(b, 100)
			in := &messages.Inbound{Channel: "fake", ChatID: "1", SenderID: "1", Text: "and now?", Time: time.Now()}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for range b.N {
				rig.root.Send(rig.router, &respawn{inbound: tc.send, in: in})
				for !tc.until(<-rig.got) {
				}
				b.StopTimer()
				cpu -= processCPU()
				rig.root.Send(rig.router, &stopChild{})
				for !isMsg[*actor.Terminated](<-rig.got) {
				}
				cpu += processCPU()
				b.StartTimer()
			}
			rig.report(b, processCPU()-cpu)
		})
	}
}

// BenchmarkPassivationLoadHistory is the Store read alone: a 100-message transcript.
func BenchmarkPassivationLoadHistory(b *testing.B) {
	rig := newRespawnRig(b, 100)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	defer func() { rig.report(b, processCPU()-cpu) }()
	for range b.N {
		err := rig.deps.Store.View(func(r persistence.Reader) error {
			h, _, _, err := loadHistory(r, respawnKey)
			if len(h) != 100 {
				return fmt.Errorf("%d entries, want 100", len(h))
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

const respawnKey = "agent:main:fake:direct:1"

type (
	respawn struct {
		inbound bool
		in      *messages.Inbound
	}
	stopChild struct{}
)

type respawnRig struct {
	deps   *Deps
	root   *actor.RootContext
	router *actor.PID
	got    chan any
	size   int // bytes of the stored transcript
}

// newRespawnRig stores a conversation of n entries in a bolt file and starts a stand-in
// Router that spawns a Session for it on respawn and reports what the Session tells it.
func newRespawnRig(b *testing.B, n int) *respawnRig {
	store, err := bolt.Open(filepath.Join(b.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	size := seedConversation(b, store, n)
	reg, policy := NoTools(b)
	script := fakellm.NewScript()
	script.KeepRequests = 4
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Hang: true} }
	deps := &Deps{Log: zerolog.Nop(), Store: store, Agents: []*Agent{{ID: "main", Name: "Reef",
		Workspace: b.TempDir(), Model: "fake/m", Provider: fakellm.New(script), Tools: reg, Policy: policy,
		ContextWindow: 128000}}}
	system := actor.NewActorSystemWithConfig(SystemConfig(deps.Log))
	b.Cleanup(system.Shutdown)
	storage := system.Root.Spawn(StorageProps(store, deps.Log))
	rig := &respawnRig{deps: deps, root: system.Root, got: make(chan any, 16), size: size}
	var child *actor.PID
	var spawned uint64
	rig.router = system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch msg := ctx.Message().(type) {
		case *respawn:
			spawned++
			child, _ = ctx.SpawnNamed(SessionProps(deps, storage, ctx.Self()), sessionName(respawnKey, spawned))
			if msg.inbound {
				ctx.Send(child, msg.in)
			}
		case *stopChild:
			ctx.Poison(child)
		case *actor.Terminated:
			rig.got <- msg
		case *sessionIdle, *sessionBusy:
			rig.got <- msg
		}
	}))
	b.Cleanup(func() { system.Root.Stop(rig.router) })
	return rig
}

// seedConversation stores n transcript entries, alternating user messages (as the Session
// formats them, metadata included) and assistant answers of a few hundred bytes, and
// reports their size as stored (JSON).
func seedConversation(b *testing.B, store persistence.Store, n int) (size int) {
	entries := make([]messages.ChatMessage, n)
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	for i := range entries {
		at = at.Add(time.Minute)
		if i%2 == 0 {
			in := messages.Inbound{Channel: "fake", ChatID: "1", SenderID: "1", MessageID: fmt.Sprint(i), Time: at,
				ChatType: messages.ChatDirect, Text: fmt.Sprintf("Question %d: %s", i, strings.Repeat("could you look at this? ", 6))}
			entries[i] = messages.ChatMessage{Role: messages.RoleUser, Content: agent.FormatInbound(in), Time: at}
		} else {
			entries[i] = messages.ChatMessage{Role: messages.RoleAssistant, Time: at,
				Content: fmt.Sprintf("Answer %d: %s", i, strings.Repeat("here is what I found. ", 16))}
		}
	}
	for _, e := range entries {
		js, _ := json.Marshal(e)
		size += len(js)
	}
	err := store.Update(func(tx persistence.Tx) error {
		if _, err := tx.AppendMessages(respawnKey, entries...); err != nil {
			return err
		}
		return tx.PutSession(persistence.SessionInfo{Key: respawnKey, AgentID: "main", Channel: "fake",
			ChatID: "1", Created: at, Updated: at, Turns: n / 2})
	})
	if err != nil {
		b.Fatal(err)
	}
	return size
}

// processCPU is the user and system CPU time the process has used. On a shared machine it
// says more than the wall time: a benchmark waiting for a core does not use CPU.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds the CPU time per op and the transcript's stored size to the results.
func (rig *respawnRig) report(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(rig.size)/1024, "KB-transcript")
}

func isMsg[T any](v any) bool { _, ok := v.(T); return ok }
