package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
)

// WorkGate hands out the cluster's named units of work (Deps.Work; internal/cluster's
// Holder): Hold blocks until this node holds unit, and its context ends when the node loses
// it; release gives it back. Nil: one node, which does all the work.
type WorkGate interface {
	Hold(ctx context.Context, unit string) (held context.Context, release context.CancelFunc, err error)
}

// TimerWork is the unit of work of the Timer in a cluster: the node that holds it fires cron
// jobs and heartbeats; the others answer cron requests and keep their job lists fresh.
const TimerWork = "timer"

// errJobMoved is a cluster fire's error when the job's stored next run is not the one this
// Timer fired (another node fired it, or it was changed): nothing is written.
var errJobMoved = errors.New("timer: the job ran or changed on another node")

// Timer self-messages in a cluster.
type (
	timerLead struct {
		held bool
		gen  uint64
	}
	timerRefresh struct{}
)

// defaultRefresh is how often a cluster Timer re-reads the jobs other nodes may have changed.
const defaultRefresh = 5 * time.Second

// clustered reports whether the Timer shares its jobs with other nodes.
func (t *Timer) clustered() bool { return t.deps.Work != nil }

// startLead asks the gate for the timer's unit in a goroutine the Timer owns (ended by
// stop), and tells the Timer whenever this node gains or loses it. A second goroutine sends
// timerRefresh every Refresh.
func (t *Timer) startLead(ctx actor.Context) {
	t.leadGen++
	gen, self, root, gate, stop := t.leadGen, ctx.Self(), ctx.ActorSystem().Root, t.deps.Work, t.cancel
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.leadDone = done
	go func() {
		defer cancel()
		tick := time.NewTicker(t.set.Refresh)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				root.Send(self, &timerRefresh{})
			}
		}
	}()
	go func() {
		defer close(done)
		for {
			held, release, err := gate.Hold(c, TimerWork)
			if err != nil {
				return // stopped
			}
			root.Send(self, &timerLead{held: true, gen: gen})
			<-held.Done()
			root.Send(self, &timerLead{held: false, gen: gen})
			release()
		}
	}()
}

// leaseRelease bounds how long a stopping Timer waits for its lease to be given back.
const leaseRelease = 3 * time.Second

// waitLead waits (bounded) until the lead goroutine gave the timer's lease back, so another
// node takes the timer over at once rather than when the lease expires.
func (t *Timer) waitLead() {
	if t.leadDone == nil {
		return
	}
	select {
	case <-t.leadDone:
	case <-time.After(leaseRelease):
	}
	t.leadDone = nil
}

// onLead starts firing when this node took the timer over: it re-reads the jobs, gives each
// missed one its catch-up run, and starts the heartbeats. Losing it stops every wake-up.
func (t *Timer) onLead(ctx actor.Context, msg *timerLead) error {
	if msg.gen != t.leadGen {
		return nil
	}
	if !msg.held {
		t.passive = true
		if t.disarm != nil {
			t.disarm()
			t.disarm = nil
		}
		t.wakes, t.waiting = nil, nil
		t.log.Info().Msg("another node runs the cluster's timer now")
		return nil
	}
	t.passive = false
	jobs, err := t.loadJobs()
	if err != nil {
		return err
	}
	t.jobs = map[string]*schedule.Job{}
	for i := range jobs {
		t.jobs[jobs[i].ID] = &jobs[i]
	}
	t.wakes = nil
	t.log.Info().Int("jobs", len(jobs)).Msg("this node runs the cluster's timer: cron jobs and heartbeats")
	t.begin(ctx, jobs)
	return nil
}

// onRefresh re-reads the jobs: a passive Timer takes them as they are stored; the firing
// one takes every job whose stored schedule differs from its own (added, changed or
// removed through another node), except while the job's run is in flight.
func (t *Timer) onRefresh(ctx actor.Context) error {
	jobs, err := t.loadJobs()
	if err != nil {
		return err
	}
	if t.passive {
		t.jobs = map[string]*schedule.Job{}
		for i := range jobs {
			t.jobs[jobs[i].ID] = &jobs[i]
		}
		return nil
	}
	seen := map[string]bool{}
	for i := range jobs {
		j := &jobs[i]
		seen[j.ID] = true
		if cur := t.jobs[j.ID]; cur != nil && cur.UpdatedAtMs == j.UpdatedAtMs && cur.Enabled == j.Enabled &&
			cur.State.NextRunAtMs == j.State.NextRunAtMs || t.running[jobKey(j.ID)] != nil {
			continue
		}
		t.take(j)
	}
	for id := range t.jobs {
		if !seen[id] && t.running[jobKey(id)] == nil {
			delete(t.jobs, id)
			t.unschedule(jobKey(id))
		}
	}
	t.arm(ctx)
	return nil
}

// take makes the stored j the Timer's copy of the job, scheduled at its stored next run.
func (t *Timer) take(j *schedule.Job) {
	t.jobs[j.ID] = j
	t.unschedule(jobKey(j.ID))
	if j.Enabled && j.State.NextRunAtMs != 0 {
		t.schedule(jobKey(j.ID), time.UnixMilli(j.State.NextRunAtMs), "due")
	}
}

// reloadJob takes job id as stored, after a fire found it changed.
func (t *Timer) reloadJob(ctx actor.Context, id string) {
	var j schedule.Job
	var ok bool
	err := t.deps.Store.View(func(r persistence.Reader) error {
		var err error
		j, ok, err = schedule.GetJob(r, id)
		return err
	})
	switch {
	case err != nil:
		t.log.Error().Err(err).Str("job", id).Msg("timer: reload job")
	case !ok:
		delete(t.jobs, id)
		t.unschedule(jobKey(id))
	default:
		t.take(&j)
	}
	t.arm(ctx)
}

func (t *Timer) loadJobs() ([]schedule.Job, error) {
	var jobs []schedule.Job
	err := t.deps.Store.View(func(r persistence.Reader) error {
		var err error
		jobs, err = schedule.ListJobs(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("timer: load jobs: %w", err)
	}
	return jobs, nil
}

// unmoved checks, in a cluster, inside the fire's transaction, that job id's stored next run
// is still next: the one the Timer fires. Two nodes that fire the same run (a node paused
// past its lease, a handover) write it once: SERIALIZABLE makes the second see the first.
func (t *Timer) unmoved(tx persistence.Tx, id string, next int64) error {
	if !t.clustered() {
		return nil
	}
	j, ok, err := schedule.GetJob(tx, id)
	if err != nil {
		return err
	}
	if !ok || j.State.NextRunAtMs != next {
		return errJobMoved
	}
	return nil
}

// outcomeOnly, in a cluster, keeps a job's stored schedule when it moved on since this
// Timer's copy (another node ran it since): of c it writes only the last run's outcome, and
// reports true. Writing all of c would move the job's next run back, and run it again.
func (t *Timer) outcomeOnly(tx persistence.Tx, c *schedule.Job, oldNext int64) (bool, error) {
	if !t.clustered() {
		return false, nil
	}
	cur, ok, err := schedule.GetJob(tx, c.ID)
	if err != nil || !ok {
		return true, err
	}
	if cur.State.NextRunAtMs == c.State.NextRunAtMs || cur.State.NextRunAtMs == oldNext {
		return false, nil
	}
	cur.State.LastStatus, cur.State.LastError = c.State.LastStatus, c.State.LastError
	return true, schedule.PutJob(tx, &cur)
}
