package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	"github.com/reefgw/reef/schedule"
)

// TestE2EClusterCronOnce: a cron job due every minute, on three `reef gateway` nodes in
// cluster mode, fires once per due time, not once per node, also when the node holding the
// cluster's timer is SIGKILLed between two runs. The job is added with `reef cron add`; its
// first run is then moved to a few seconds after the partitions settle (reef runs jobs at most
// once a minute, so a second run comes at the next minute boundary: the test watches two
// runs, 15 to 75 s apart, and counts the model calls they make: 2, not 6).
func TestE2EClusterCronOnce(t *testing.T) {
	url := pgtest.URL(t)
	const partitions, lease = 16, 4
	llm := newEchoLLM(t, 0, nil)
	var envs []env
	for _, id := range []string{"n1", "n2", "n3"} {
		_, e := writeConfig(t, llm.srv, postgresYAML(url)+clusterYAML(id, partitions, lease))
		envs = append(envs, e)
	}
	mark := tok("cron", 1)
	add := reef(t, envs[0], "", "cron", "add", "-name", "minutely", "-cron", "* * * * *", "-isolated", "-text", "tick "+mark)
	id := regexp.MustCompile(`added ([0-9a-f]+)`).FindStringSubmatch(add.stdout)
	if add.code != 0 || id == nil {
		t.Fatalf("cron add = %d\n%s%s", add.code, add.stdout, add.stderr)
	}
	moveNextRun(t, url, id[1], time.Now().Add(10*time.Minute)) // not while the nodes come up
	var nodes []*node
	for _, e := range envs {
		nodes = append(nodes, newNode(t, e))
	}
	// The partitions settle first: a run whose partition is handed over mid-run (a node
	// joining) is stopped and resumed by the new owner, which calls the model again for the
	// same fire. What this test counts is fires.
	if !eventually(time.Minute, func() bool {
		o := leaseOwners(t, url)
		return o["n1"] >= partitions/3 && o["n2"] >= partitions/3 && o["n3"] >= partitions/3
	}) {
		t.Fatalf("partitions not spread over three nodes: %v", leaseOwners(t, url))
	}
	time.Sleep(lease * time.Second)          // a handover's second step (the release) is a round later
	first := time.Now().Add(8 * time.Second) // after the timer's next re-read of the jobs (5 s)
	moveNextRun(t, url, id[1], first)

	if !eventually(45*time.Second, func() bool { return llm.requests(mark) >= 1 }) {
		t.Fatalf("the job's first run did not come\nn1:\n%s", tail(nodes[0].logs(), 3000))
	}
	// The run is done (its transcript stored) before the timer's node dies, so no node
	// resumes it: each model call below is a run of its own.
	if !eventually(20*time.Second, func() bool { j := readJob(t, url, id[1]); return j.State.LastStatus == "ok" }) {
		t.Fatalf("the first run did not finish: %+v", readJob(t, url, id[1]).State)
	}
	time.Sleep(2 * time.Second) // a copy of the run on another node would have reached the model by now
	if got := llm.requests(mark); got != 1 {
		t.Errorf("the job ran %d times at its first due time on three nodes; want once", got)
	}
	holder := workHolder(t, url, "timer")
	victim := -1
	for i, n := range []string{"n1", "n2", "n3"} {
		if n == holder {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("no node holds the timer (%q)", holder)
	}
	nodes[victim].kill()
	t.Logf("first run at %s; SIGKILLed the timer's node %s", time.Now().Format("15:04:05"), holder)

	if !eventually(75*time.Second, func() bool { return llm.requests(mark) >= 2 }) {
		t.Fatalf("the job's second run did not come after its node died\n%s", tail(nodes[(victim+1)%3].logs(), 3000))
	}
	time.Sleep(7 * time.Second) // the other nodes re-read the jobs every 5 s: a copy of a run would show by now
	for i, n := range nodes {
		if i != victim {
			n.stop()
		}
	}
	if got := llm.requests(mark); got != 2 {
		t.Errorf("the job ran %d times on three nodes over two due times; want 2", got)
	}
	j := readJob(t, url, id[1])
	if want := first.Truncate(time.Minute).Add(2 * time.Minute); j.State.NextRunAtMs != want.UnixMilli() {
		t.Errorf("next run %s; want %s (the boundary after the second run)", time.UnixMilli(j.State.NextRunAtMs), want)
	}
}

// moveNextRun sets job id's next run to at in the PostgreSQL store at url.
func moveNextRun(t *testing.T, url, id string, at time.Time) {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	setNextRun(t, st, id, at)
}

// setNextRun sets job id's next run to at in st, as the scheduler would.
func setNextRun(t *testing.T, st persistence.Store, id string, at time.Time) {
	t.Helper()
	err := st.Update(func(tx persistence.Tx) error {
		j, ok, err := schedule.GetJob(tx, id)
		if err != nil || !ok {
			t.Fatalf("job %s not stored (%v)", id, err)
		}
		if err := schedule.Unindex(tx, j.State.NextRunAtMs, id); err != nil {
			return err
		}
		j.State.NextRunAtMs = at.UnixMilli()
		return schedule.PutJob(tx, &j)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readJob reads job id from the PostgreSQL store at url.
func readJob(t *testing.T, url, id string) schedule.Job {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var j schedule.Job
	if err := st.View(func(r persistence.Reader) error {
		var err error
		j, _, err = schedule.GetJob(r, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return j
}

// workHolder reads the node holding the live unit of work name ("" when none does).
func workHolder(t *testing.T, url, name string) string {
	t.Helper()
	ctx, conn, done := pgConn(t, url)
	defer done()
	var owner string
	if err := conn.QueryRow(ctx, "SELECT owner FROM reef_work WHERE name = $1 AND expires > now()", name).Scan(&owner); err != nil {
		return ""
	}
	return owner
}
