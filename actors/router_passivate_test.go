package actors

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/memory"
)

// standIn is what a scripted Session saw: its own PID id and one message.
type standIn struct {
	id  string
	msg any
}

// routerRig runs a Router whose Sessions are stand-ins that report every message they get,
// so a test decides exactly when a "Session" reports idle or confirms a check.
type routerRig struct {
	t      *testing.T
	root   *actor.RootContext
	router *actor.PID
	seen   chan standIn
	clock  *testutil.Clock
}

func newRouterRig(t *testing.T) *routerRig {
	g := &routerRig{t: t, seen: make(chan standIn, 64),
		clock: testutil.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))}
	system := actor.NewActorSystemWithConfig(SystemConfig(testutil.Logger(t)))
	g.root = system.Root
	deps := &Deps{Log: testutil.Logger(t), Store: memory.New(), Now: g.clock.Now,
		Session: SessionSettings{IdleAfter: time.Minute}}
	standIns := actor.PropsFromFunc(func(ctx actor.Context) {
		switch ctx.Message().(type) {
		case *actor.Started, *messages.Inbound, *idleCheck, *actor.Stopping:
			g.seen <- standIn{id: ctx.Self().Id, msg: ctx.Message()}
		}
	})
	g.router = system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &Router{deps: deps, props: standIns, log: deps.Log}
	}))
	system.Root.Send(g.router, &connectorsReady{})
	t.Cleanup(func() { system.Root.Stop(g.router); system.Shutdown() })
	return g
}

func (g *routerRig) send(msg any) { g.root.Send(g.router, msg) }

func (g *routerRig) inbound(key, text string) {
	g.send(&routeInbound{in: messages.Inbound{SessionKey: key, Text: text}})
}

// next returns what the stand-ins saw next.
func (g *routerRig) next() standIn {
	g.t.Helper()
	return testutil.Receive(g.t, g.seen)
}

// expect checks the next thing a stand-in saw: a message of the type of want, from the
// stand-in id (any when empty); it returns what was seen.
func (g *routerRig) expect(id string, want any) standIn {
	g.t.Helper()
	got := g.next()
	if fmt.Sprintf("%T", got.msg) != fmt.Sprintf("%T", want) || (id != "" && got.id != id) {
		g.t.Fatalf("stand-in %s got %T, want %T at %s", got.id, got.msg, want, id)
	}
	return got
}

// idle reports key's Session idle and waits until the Router has noted it (at the clock's
// current time).
func (g *routerRig) idle(key string) {
	g.send(&sessionIdle{key: key})
	g.counts()
}

// sweep sweeps and waits until the Router has done it, so the clock moves only after.
func (g *routerRig) sweep() {
	g.send(&sweep{})
	g.counts()
}

// sweepAfterIdle moves the clock past IdleAfter and sweeps.
func (g *routerRig) sweepAfterIdle() {
	g.clock.Advance(2 * time.Minute)
	g.sweep()
}

// counts asks the Router for its live sessions and Session actors not yet terminated.
func (g *routerRig) counts() [2]int {
	reply := make(chan [2]int, 1)
	g.send(&sessionCounts{reply: reply})
	return testutil.Receive(g.t, reply)
}

// TestPassivationHandshake walks the Router through the races of passivation: a message
// forwarded in the same sweep window as the idle report, a confirmation overtaken by a new
// message, a confirmation of an older check; only a Session confirmed idle after the last
// message it was sent is stopped, and the next message respawns it.
func TestPassivationHandshake(t *testing.T) {
	g := newRouterRig(t)
	const key = "agent:main:fake:direct:1"
	g.inbound(key, "m1")
	s1 := g.expect("", &actor.Started{}).id
	g.expect(s1, &messages.Inbound{})

	// The Session reports idle, but m2 reaches the Router first: forwarding resets the idle clock.
	g.inbound(key, "m2")
	g.idle(key)
	g.clock.Advance(30 * time.Second)
	g.sweep() // idle for 30 s only: no check
	g.expect(s1, &messages.Inbound{})
	g.sweepAfterIdle() // idle long enough, and m2 was forwarded before the check
	check := g.expect(s1, &idleCheck{}).msg.(*idleCheck)

	// The check is confirmed, but m3 was forwarded after the check was sent (and an idle
	// report the Session sent before it saw m3 came in between): not stopped.
	g.inbound(key, "m3")
	g.send(&sessionIdle{key: key})
	g.send(&idleConfirmed{key: key, token: check.token})
	g.expect(s1, &messages.Inbound{})
	if c := g.counts(); c != [2]int{1, 1} {
		t.Fatalf("after a stale confirmation: %d live, %d actors; want the Session kept", c[0], c[1])
	}

	// Idle again; the older check's confirmation arrives after a newer check was sent.
	g.idle(key)
	g.sweepAfterIdle()
	newer := g.expect(s1, &idleCheck{}).msg.(*idleCheck)
	g.send(&idleConfirmed{key: key, token: check.token})
	if c := g.counts(); c != [2]int{1, 1} {
		t.Fatalf("after an older check's confirmation: %d live, %d actors; want the Session kept", c[0], c[1])
	}
	// A run started since (sessionBusy) also vetoes the confirmation of the newer check.
	g.send(&sessionBusy{key: key})
	g.send(&idleConfirmed{key: key, token: newer.token})
	if c := g.counts(); c != [2]int{1, 1} {
		t.Fatalf("busy Session: %d live, %d actors; want it kept", c[0], c[1])
	}
	g.sweepAfterIdle() // a busy Session is not checked: the next thing it gets is m4
	g.inbound(key, "m4")
	g.expect(s1, &messages.Inbound{})

	// Idle, checked, confirmed with nothing forwarded since: stopped and forgotten.
	g.idle(key)
	g.sweepAfterIdle()
	last := g.expect(s1, &idleCheck{}).msg.(*idleCheck)
	g.send(&idleConfirmed{key: key, token: last.token})
	g.expect(s1, &actor.Stopping{})
	if c := g.counts(); c[0] != 0 {
		t.Fatalf("%d live sessions after passivation, want 0", c[0])
	}

	// The next message spawns a new Session for the key.
	g.inbound(key, "m5")
	s2 := g.expect("", &actor.Started{}).id
	if s2 == s1 {
		t.Fatalf("respawned Session reuses the stopped one's id %s", s1)
	}
	g.expect(s2, &messages.Inbound{})
	if c := g.counts(); c[0] != 1 {
		t.Fatalf("after respawn: %d live sessions, want 1", c[0])
	}
	// Once the stopped one's Terminated reached the Router, only the new actor is left.
	deadline := time.Now().Add(testutil.Timeout)
	for c := g.counts(); c != [2]int{1, 1}; c = g.counts() {
		if time.Now().After(deadline) {
			t.Fatalf("after respawn: %d live, %d actors; want 1 and 1", c[0], c[1])
		}
	}
}

// TestStoppedChildIsCollected: once its parent has handled its Terminated, a stopped child
// (a passivated Session, a finished Turn) is garbage, even the most recently spawned one,
// whose PID (with its process cached in it) protoactor's child set used to keep in its
// backing array (the fork's PIDSet patch). The Router and Session rely on this.
func TestStoppedChildIsCollected(t *testing.T) {
	system := actor.NewActorSystemWithConfig(SystemConfig(testutil.Logger(t)))
	t.Cleanup(system.Shutdown)
	type spawnThree struct {
		stopped chan weak.Pointer[countingChild]
	}
	type ping struct{ reply chan struct{} }
	terminated := make(chan struct{}, 1)
	parent := system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch msg := ctx.Message().(type) {
		case *spawnThree:
			for i := range 3 {
				child := &countingChild{}
				pid := ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return child }))
				ctx.Send(pid, "hello") // resolving the PID caches its process in it
				if i == 2 {
					msg.stopped <- weak.Make(child)
					ctx.Stop(pid)
				}
			}
		case *actor.Terminated:
			terminated <- struct{}{}
		case *ping:
			close(msg.reply)
		}
	}))
	stopped := make(chan weak.Pointer[countingChild], 1)
	system.Root.Send(parent, &spawnThree{stopped: stopped})
	child := testutil.Receive(t, stopped)
	testutil.Receive(t, terminated)
	done := make(chan struct{})
	system.Root.Send(parent, &ping{reply: done}) // answered after the Terminated was handled
	testutil.Receive(t, done)
	// The child's mailbox goroutine may still be returning (it sent Terminated on its way
	// out), holding the child on its stack for a moment: collect until it is gone.
	deadline := time.Now().Add(testutil.Timeout)
	for runtime.GC(); child.Value() != nil; runtime.GC() {
		if time.Now().After(deadline) {
			t.Fatal("a stopped child is still reachable after its parent handled its Terminated")
		}
		time.Sleep(time.Millisecond)
	}
}

// countingChild is a child actor that counts what it receives.
type countingChild struct{ received int }

func (c *countingChild) Receive(actor.Context) { c.received++ }
