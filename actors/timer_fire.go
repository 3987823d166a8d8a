package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
)

// cronRun is a cron job or heartbeat event enqueued and not yet answered by its session.
type cronRun struct {
	sessionKey string
	source     string
	enqueued   bool
	started    time.Time // real time: a run that never finishes frees its slot after runTimeout
}

// runTimeout frees the slot of a run whose session never answered (it crashed for good).
const runTimeout = 30 * time.Minute

// due handles a job whose time came: it fires now, waits for the next heartbeat
// (wakeMode next-heartbeat), or waits for a free slot when MaxConcurrentRuns are in flight.
func (t *Timer) due(ctx actor.Context, id, reason string) {
	j := t.jobs[id]
	if j == nil || !j.Enabled && reason != "manual" {
		return
	}
	if j.WakeMode == "next-heartbeat" && reason != "manual" && reason != "heartbeat" {
		if b := t.beat(j.AgentID); b.set.Every > 0 {
			b.pending = append(b.pending, id)
			return
		}
	}
	if t.running[jobKey(id)] != nil || t.cronInFlight() >= t.set.MaxConcurrentRuns {
		t.waiting = append(t.waiting, pendingFire{id: id, reason: reason})
		t.poll(ctx)
		return
	}
	if err := t.fire(ctx, j, reason); err != nil {
		t.log.Error().Err(err).Str("job", id).Msg("fire cron job")
		t.skip(j, err)
	}
}

// skip records a run that could not start and moves the job to its next time.
func (t *Timer) skip(j *schedule.Job, err error) {
	now, old := t.clock.Now(), j.State.NextRunAtMs
	j.State.LastRunAtMs, j.State.LastStatus, j.State.LastError = now.UnixMilli(), "error", err.Error()
	j.State.NextRunAtMs = 0
	if next, ok := j.Next(now); ok {
		j.State.NextRunAtMs = next.UnixMilli()
		t.schedule(jobKey(j.ID), next, "due")
	}
	t.saveJob(j, old)
}

func (t *Timer) cronInFlight() int {
	n := 0
	for key := range t.running {
		if strings.HasPrefix(key, "job:") {
			n++
		}
	}
	return n
}

// fire enqueues the job's system event. The run record and the job's next time are written
// in the same transaction as the inbox entry, before the session sees it.
func (t *Timer) fire(ctx actor.Context, j *schedule.Job, reason string) error {
	now := t.clock.Now()
	in, err := t.jobEvent(j, now)
	if err != nil {
		return err
	}
	updated := *j
	updated.State.LastRunAtMs, updated.State.LastStatus, updated.State.LastError = now.UnixMilli(), "running", ""
	updated.State.NextRunAtMs = 0
	if next, ok := updated.Next(now); ok {
		updated.State.NextRunAtMs = next.UnixMilli()
	}
	remove := updated.Schedule.Kind == "at" && updated.DeleteAfterRun
	old := j.State.NextRunAtMs
	run := schedule.Run{JobID: j.ID, AtMs: now.UnixMilli(), SessionKey: in.SessionKey, Reason: reason, Status: "started"}
	apply := func(tx persistence.Tx) error {
		if err := t.unmoved(tx, j.ID, old); err != nil {
			return err
		}
		if err := schedule.Unindex(tx, old, j.ID); err != nil {
			return err
		}
		if err := schedule.PutRun(tx, run); err != nil {
			return err
		}
		if remove {
			return schedule.DeleteJob(tx, j.ID)
		}
		return schedule.PutJob(tx, &updated)
	}
	if remove {
		delete(t.jobs, j.ID)
	} else {
		*j = updated
	}
	t.unschedule(jobKey(j.ID))
	if !remove && updated.Enabled && updated.State.NextRunAtMs != 0 {
		t.schedule(jobKey(j.ID), time.UnixMilli(updated.State.NextRunAtMs), "due")
	}
	t.running[jobKey(j.ID)] = &cronRun{sessionKey: in.SessionKey, source: in.Source, started: time.Now()}
	t.enqueue(ctx, jobKey(j.ID), in, apply)
	return nil
}

// enqueue runs the durable enqueue in a goroutine the Timer owns.
func (t *Timer) enqueue(ctx actor.Context, key string, in messages.Inbound, apply func(persistence.Tx) error) {
	self, root, storage, router, cancel := ctx.Self(), ctx.ActorSystem().Root, t.storage, t.router, t.cancel
	go func() {
		var err error
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("timer: panic: %v", r)
			}
			root.Send(self, &cronEnqueued{key: key, sessionKey: in.SessionKey, err: err})
		}()
		c, stop := context.WithCancel(context.Background())
		defer stop()
		go func() {
			select {
			case <-cancel:
				stop()
			case <-c.Done():
			}
		}()
		err = enqueue(c, root, storage, router, in, apply)
	}()
}

func (t *Timer) onEnqueued(ctx actor.Context, msg *cronEnqueued) {
	run := t.running[msg.key]
	if run == nil {
		return
	}
	if msg.err == nil {
		run.enqueued = true
		t.poll(ctx)
		return
	}
	delete(t.running, msg.key)
	if errors.Is(msg.err, errJobMoved) { // another node ran it: take the job as stored
		t.log.Info().Str("key", msg.key).Msg("the cron job ran on another node")
		t.reloadJob(ctx, strings.TrimPrefix(msg.key, "job:"))
		t.next(ctx)
		return
	}
	t.log.Error().Err(msg.err).Str("key", msg.key).Msg("could not enqueue the event; it did not run")
	t.finish(msg.key, "error", msg.err.Error())
	t.next(ctx)
}

// poll arranges a check of the runs in flight (real time: completion depends on the model).
func (t *Timer) poll(ctx actor.Context) {
	if t.polling || len(t.running) == 0 {
		return
	}
	t.polling = true
	self, root := ctx.Self(), ctx.ActorSystem().Root
	time.AfterFunc(t.set.PollEvery, func() { root.Send(self, &timerPoll{}) })
}

// onPoll retires runs whose session answered (their inbox entry is gone) and fires waiting jobs.
func (t *Timer) onPoll(ctx actor.Context) {
	t.polling = false
	var done, stuck []string
	err := t.deps.Store.View(func(r persistence.Reader) error {
		for key, run := range t.running {
			if !run.enqueued {
				continue
			}
			if time.Since(run.started) > runTimeout {
				stuck = append(stuck, key)
				continue
			}
			items, err := r.Inbox(run.sessionKey)
			if err != nil {
				return err
			}
			pending := false
			for _, it := range items {
				pending = pending || it.Source == run.source
			}
			if !pending {
				done = append(done, key)
			}
		}
		return nil
	})
	if err != nil {
		t.log.Error().Err(err).Msg("timer: check runs")
	}
	for _, key := range done {
		delete(t.running, key)
		t.finish(key, "ok", "")
	}
	for _, key := range stuck {
		delete(t.running, key)
		t.log.Warn().Str("key", key).Msg("a scheduled run got no answer in 30 min; its slot is freed")
		t.finish(key, "error", "no answer within 30 minutes")
	}
	t.next(ctx)
	t.poll(ctx)
}

// next fires waiting jobs while slots are free; a job whose previous run is still in
// flight keeps its place.
func (t *Timer) next(ctx actor.Context) {
	queue := t.waiting
	t.waiting = nil
	var keep []pendingFire
	for i, p := range queue {
		if t.cronInFlight() >= t.set.MaxConcurrentRuns {
			keep = append(keep, queue[i:]...)
			break
		}
		if t.running[jobKey(p.id)] != nil {
			keep = append(keep, p)
			continue
		}
		t.due(ctx, p.id, p.reason)
	}
	t.waiting = append(keep, t.waiting...)
}

// finish records a job run's outcome on the job (heartbeats keep theirs in memory).
func (t *Timer) finish(key, status, errText string) {
	id, ok := strings.CutPrefix(key, "job:")
	if !ok {
		if b := t.beats[strings.TrimPrefix(key, "hb:")]; b != nil {
			b.busy = false
		}
		return
	}
	j := t.jobs[id]
	if j == nil {
		return
	}
	j.State.LastStatus, j.State.LastError = status, errText
	t.saveJob(j, 0)
}

// saveJob writes the job through Storage without waiting (oldNext: the next-run index entry
// to drop, 0 if unchanged); a job removed meanwhile stays removed.
func (t *Timer) saveJob(j *schedule.Job, oldNext int64) {
	c := *j
	t.root.Send(t.storage, &storeWrite{Apply: func(tx persistence.Tx) error {
		if ok, err := schedule.JobExists(tx, c.ID); err != nil || !ok {
			return err
		}
		if done, err := t.outcomeOnly(tx, &c, oldNext); done || err != nil {
			return err
		}
		if oldNext != c.State.NextRunAtMs {
			if err := schedule.Unindex(tx, oldNext, c.ID); err != nil {
				return err
			}
		}
		return schedule.PutJob(tx, &c)
	}, Done: func(err error) {
		if err != nil {
			t.log.Error().Err(err).Str("job", c.ID).Msg("save job")
		}
	}})
}
