package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/memory"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// TestSessionConfirmsIdleOnlyWhenIdle: a real Session under a stand-in Router does not
// confirm an idle check while a run is going, and confirms one once the run is recorded.
func TestSessionConfirmsIdleOnlyWhenIdle(t *testing.T) {
	reg, policy := NoTools(t)
	script := fakellm.NewScript(fakellm.Reply{Hang: true})
	store := memory.New()
	deps := &Deps{Log: testutil.Logger(t), Store: store, Agents: []*Agent{{ID: "main", Name: "Reef",
		Workspace: t.TempDir(), Model: "fake/m", Provider: fakellm.New(script), Tools: reg, Policy: policy,
		ContextWindow: 128000}}}
	system := actor.NewActorSystemWithConfig(SystemConfig(deps.Log))
	t.Cleanup(system.Shutdown)
	storage := system.Root.Spawn(StorageProps(store, deps.Log))
	const key = "agent:main:fake:direct:7"
	got := make(chan any, 16)
	session := make(chan *actor.PID, 1)
	router := system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch msg := ctx.Message().(type) {
		case *actor.Started:
			pid, err := ctx.SpawnNamed(SessionProps(deps, storage, ctx.Self()), sessionName(key, 1))
			if err != nil {
				t.Error(err)
			}
			session <- pid
		case *sessionIdle, *sessionBusy, *idleConfirmed:
			got <- msg
		}
	}))
	t.Cleanup(func() { system.Root.Stop(router) })
	pid := testutil.Receive(t, session)
	testutil.Receive(t, got) // idle after loading its (empty) conversation
	system.Root.Send(pid, &messages.Inbound{Channel: "fake", ChatID: "7", SenderID: "7", Text: "hi", Time: time.Now()})
	if _, ok := testutil.Receive(t, got).(*sessionBusy); !ok {
		t.Fatal("the Session did not report the run")
	}
	system.Root.Send(pid, &idleCheck{token: 1}) // the model hangs: the run is going
	system.Root.Send(pid, &messages.CancelRun{SessionKey: key})
	msg := testutil.Receive(t, got)
	if _, ok := msg.(*sessionIdle); !ok {
		t.Fatalf("got %T while a run was going, want nothing until the cancelled run was recorded (sessionIdle)", msg)
	}
	system.Root.Send(pid, &idleCheck{token: 2})
	msg = testutil.Receive(t, got)
	if c, ok := msg.(*idleConfirmed); !ok || c.token != 2 || c.key != key {
		t.Fatalf("got %#v, want the idle Session to confirm check 2 for %s", msg, key)
	}
}
