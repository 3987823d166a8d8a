package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
)

// clusterNode is one reef node of a cluster test: its own actor system and connection pool
// on the test's PostgreSQL schema, sharing the fake clock.
type clusterNode struct {
	name   string
	rt     *actors.Runtime
	store  *postgres.Store
	script *fakellm.Script // what the node's model was asked: one request per cron run
}

// modelCalls counts the runs the nodes made (each run of the job asks the model once).
func modelCalls(nodes ...*clusterNode) int {
	n := 0
	for _, node := range nodes {
		n += len(node.script.Requests())
	}
	return n
}

func (n *clusterNode) stop(t *testing.T) {
	if n.rt == nil {
		return
	}
	if err := n.rt.Stop(10 * time.Second); err != nil {
		t.Error(err)
	}
	n.rt = nil
	n.store.Close()
}

// startClusterNode starts a node whose Timer asks gate for the cluster's timer (nil gate:
// a cluster.Holder on the work leases of url).
func startClusterNode(t *testing.T, url, name string, clock *testutil.Clock, gate actors.WorkGate) *clusterNode {
	t.Helper()
	store, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if gate == nil {
		work, err := cluster.NewWorkLeases(context.Background(), store.Pool(), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		gate = cluster.NewHolder(work, name, zerolog.Nop())
	}
	script := fakellm.NewScript()
	reg, err := tools.NewRegistry(cron.New())
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := tools.NewPolicy(nil, nil, reg.Names())
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: fakellm.New(script), Tools: reg, Policy: policy, ContextWindow: 128000, Location: time.UTC}
	deps := &actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"fake": fake.New()}, Clock: clock, Work: gate,
		Access: map[string]*access.Rules{"fake": {DMPolicy: "allowlist", AllowFrom: []string{"42"}}}}
	rt, err := actors.Start(deps, actors.WithTimer(actors.TimerSettings{PollEvery: 5 * time.Millisecond, Refresh: 200 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	n := &clusterNode{name: name, rt: rt, store: store, script: script}
	t.Cleanup(func() { n.stop(t) })
	return n
}

// everyMinute adds a job due every minute through n and returns it.
func everyMinute(t *testing.T, n *clusterNode) schedule.Job {
	t.Helper()
	var job schedule.Job
	if err := cronDo(t, &harness{t: t, rt: n.rt}, "add", map[string]any{"job": map[string]any{"name": "minutely",
		"schedule": map[string]any{"kind": "cron", "expr": "* * * * *", "tz": "UTC"},
		"payload":  map[string]any{"kind": "agentTurn", "message": "tick"}}}, &job); err != nil {
		t.Fatal(err)
	}
	return job
}

// alwaysHeld is a gate that lets every node fire: what a cluster looks like to the Timers in
// the instant a paused holder wakes up after another node took the timer over.
type alwaysHeld struct{}

func (alwaysHeld) Hold(ctx context.Context, _ string) (context.Context, context.CancelFunc, error) {
	c, cancel := context.WithCancel(ctx)
	return c, cancel, nil
}

// TestClusterCronFiresOnceWhenEveryNodeFires: three nodes that all believe they run the
// cluster's timer fire a job due every minute; over three minutes it runs 3 times, not 9:
// each fire checks, in its transaction, that the job's next run is still the one it fires.
func TestClusterCronFiresOnceWhenEveryNodeFires(t *testing.T) {
	url := pgtest.URL(t)
	clock := testutil.NewClock(time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC))
	var nodes []*clusterNode
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		nodes = append(nodes, startClusterNode(t, url, name, clock, alwaysHeld{}))
	}
	job := everyMinute(t, nodes[1])
	want := time.Date(2026, 11, 22, 9, 31, 0, 0, time.UTC)
	for minute := 1; minute <= 3; minute++ {
		armedAt(t, clock, want) // every node's Timer read the job (or its last run)
		clock.Advance(time.Minute)
		waitUntil(t, "the minute's run", func() bool {
			clock.Advance(0) // fires what a Timer armed for a time that has come
			return modelCalls(nodes...) >= minute
		})
		want = want.Add(time.Minute)
	}
	armedAt(t, clock, want)
	waitUntil(t, "the runs to be answered", func() bool { return inboxEmpty(t, nodes[0].store, "agent:main:cron:"+job.ID) })
	if n := modelCalls(nodes...); n != 3 {
		t.Errorf("%d runs over 3 minutes on 3 nodes; want 3", n)
		for _, n := range nodes {
			for _, r := range n.script.Requests() {
				t.Logf("%s: %d messages, last %+v", n.name, len(r.Messages), r.Messages[len(r.Messages)-1].Content)
			}
		}
	}
}

// TestClusterTimerMovesWhenItsNodeStops: of three nodes only the holder of the timer's work
// lease fires; when it stops, another takes the timer over and the job goes on once a minute.
func TestClusterTimerMovesWhenItsNodeStops(t *testing.T) {
	url := pgtest.URL(t)
	clock := testutil.NewClock(time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC))
	nodes := map[string]*clusterNode{}
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		nodes[name] = startClusterNode(t, url, name, clock, nil)
	}
	observer, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer observer.Close()
	work, err := cluster.NewWorkLeases(context.Background(), observer.Pool(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	holder := func() string {
		list, err := work.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range list {
			if w.Name == actors.TimerWork && w.Live {
				return w.Owner
			}
		}
		return ""
	}
	waitUntil(t, "a node to hold the timer", func() bool { return holder() != "" })
	job := everyMinute(t, nodes["node-b"])
	want := time.Date(2026, 11, 22, 9, 31, 0, 0, time.UTC)
	armedAt(t, clock, want)
	clock.Advance(time.Minute)
	all := []*clusterNode{nodes["node-a"], nodes["node-b"], nodes["node-c"]}
	waitUntil(t, "the first run", func() bool { return modelCalls(all...) == 1 })

	first := holder()
	nodes[first].stop(t)
	delete(nodes, first)
	waitUntil(t, "another node to take the timer over", func() bool { h := holder(); return h != "" && h != first })
	for minute := 2; minute <= 3; minute++ {
		want = want.Add(time.Minute)
		armedAt(t, clock, want)
		clock.Advance(time.Minute)
		waitUntil(t, "the minute's run", func() bool {
			clock.Advance(0) // fires what a Timer armed for a time that has come
			return modelCalls(all...) >= minute
		})
	}
	armedAt(t, clock, want.Add(time.Minute))
	waitUntil(t, "the runs to be answered", func() bool { return inboxEmpty(t, observer, "agent:main:cron:"+job.ID) })
	if n := modelCalls(all...); n != 3 {
		t.Errorf("%d runs over 3 minutes; want 3", n)
	}
}

// armedAt waits until the fake clock's earliest wake-up is at (a Timer armed the job's next
// run and nothing earlier is pending).
func armedAt(t *testing.T, clock *testutil.Clock, at time.Time) {
	t.Helper()
	waitUntil(t, "the timer to arm at "+at.Format("15:04"), func() bool {
		next, ok := clock.Next()
		return ok && next.Equal(at)
	})
}
