package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools/cron"
)

// cronRun is a cron job or heartbeat event enqueued and not yet answered by its session.
type cronRun struct {
	sessionKey string
	source     string
	enqueued   bool
}

// due handles a job whose time came: it fires now, waits for the next heartbeat
// (wakeMode next-heartbeat), or waits for a free slot when MaxConcurrentRuns are in flight.
func (t *Timer) due(ctx actor.Context, id, reason string) {
	j := t.jobs[id]
	if j == nil || !j.Enabled && reason != "manual" {
		return
	}
	if j.WakeMode == "next-heartbeat" && reason != "manual" && reason != "heartbeat" {
		b := t.beat(j.AgentID)
		b.pending = append(b.pending, id)
		return
	}
	if t.running[jobKey(id)] != nil || t.cronInFlight() >= t.set.MaxConcurrentRuns {
		t.waiting = append(t.waiting, pendingFire{id: id, reason: reason})
		t.poll(ctx)
		return
	}
	if err := t.fire(ctx, j, reason); err != nil {
		t.log.Error().Err(err).Str("job", id).Msg("fire cron job")
	}
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
func (t *Timer) fire(ctx actor.Context, j *cron.Job, reason string) error {
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
	run := cron.Run{JobID: j.ID, AtMs: now.UnixMilli(), SessionKey: in.SessionKey, Reason: reason, Status: "started"}
	apply := func(tx persistence.Tx) error {
		if old != 0 {
			if err := tx.Delete(bucketNext, nextKey(old, j.ID)); err != nil {
				return err
			}
		}
		if err := putJSON(tx, bucketRuns, runKey(j.ID, run.AtMs), run); err != nil {
			return err
		}
		if remove {
			return tx.Delete(bucketJobs, j.ID)
		}
		return putJob(tx, &updated)
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
	t.running[jobKey(j.ID)] = &cronRun{sessionKey: in.SessionKey, source: in.Source}
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
	var done []string
	err := t.deps.Store.View(func(r persistence.Reader) error {
		for key, run := range t.running {
			if !run.enqueued {
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
	t.next(ctx)
	t.poll(ctx)
}

// next fires waiting jobs while slots are free.
func (t *Timer) next(ctx actor.Context) {
	for len(t.waiting) > 0 && t.cronInFlight() < t.set.MaxConcurrentRuns {
		p := t.waiting[0]
		t.waiting = t.waiting[1:]
		if t.running[jobKey(p.id)] != nil {
			t.waiting = append(t.waiting, p)
			break
		}
		t.due(ctx, p.id, p.reason)
	}
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
	t.saveJob(j)
}

// saveJob writes the job through Storage without waiting; a job removed meanwhile stays removed.
func (t *Timer) saveJob(j *cron.Job) {
	c := *j
	t.root.Send(t.storage, &storeWrite{Apply: func(tx persistence.Tx) error {
		if _, ok, err := tx.Get(bucketJobs, c.ID); err != nil || !ok {
			return err
		}
		return putJob(tx, &c)
	}, Done: func(err error) {
		if err != nil {
			t.log.Error().Err(err).Str("job", c.ID).Msg("save job")
		}
	}})
}

func putJob(tx persistence.Tx, j *cron.Job) error {
	if j.Enabled && j.State.NextRunAtMs != 0 {
		if err := tx.Put(bucketNext, nextKey(j.State.NextRunAtMs, j.ID), []byte(j.ID)); err != nil {
			return err
		}
	}
	return putJSON(tx, bucketJobs, j.ID, j)
}

func putJSON(tx persistence.Tx, bucket, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(bucket, key, b)
}

// jobEvent builds the system event a job raises: the target session and where the reply goes.
func (t *Timer) jobEvent(j *cron.Job, now time.Time) (messages.Inbound, error) {
	in := messages.Inbound{System: true, Source: "cron:" + j.ID, Time: now, ChatType: messages.ChatDirect}
	origin := j.SessionKey
	if origin == "" {
		origin = t.mainSession(j.AgentID)
	}
	in.SessionKey = origin
	if j.SessionTarget == "isolated" || j.Payload.Kind == "agentTurn" {
		in.SessionKey = fmt.Sprintf("agent:%s:cron:%s", j.AgentID, j.ID)
	}
	if in.SessionKey == "" {
		return in, fmt.Errorf("timer: job %s: agent %s has no conversation to run in yet", j.ID, j.AgentID)
	}
	switch j.Delivery.Mode {
	case "channel":
		in.Channel, in.ChatID = j.Delivery.Channel, j.Delivery.To
	case "announce":
		info := t.sessionInfo(origin)
		in.Channel, in.Account, in.ChatID, in.ThreadID = info.Channel, info.Account, info.ChatID, info.ThreadID
	}
	in.Text = eventText(j, now)
	return in, nil
}

// eventText is what the model reads when a job fires.
func eventText(j *cron.Job, now time.Time) string {
	loc, err := j.Schedule.Location()
	if err != nil {
		loc = time.UTC
	}
	name := j.Name
	if name == "" {
		name = j.ID
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[Scheduled reminder] Your cron job %q (id %s, %s) fired. It says:\n", name, j.ID, j.Schedule.Describe())
	for line := range strings.Lines(j.Text()) {
		b.WriteString("> " + strings.TrimRight(line, "\n") + "\n")
	}
	b.WriteString("Handle it yourself now, as it says. This is not a message from the user: do not relay or " +
		"repeat the reminder to them unless it asks you to tell them something.\n")
	fmt.Fprintf(&b, "Current time: %s (%s), %s UTC.", now.In(loc).Format("Monday 2006-01-02 15:04 MST"),
		loc.String(), now.UTC().Format("2006-01-02 15:04"))
	return b.String()
}

func (t *Timer) sessionInfo(key string) persistence.SessionInfo {
	var info persistence.SessionInfo
	if key == "" {
		return info
	}
	if err := t.deps.Store.View(func(r persistence.Reader) error {
		var err error
		info, _, err = r.Session(key)
		return err
	}); err != nil {
		t.log.Error().Err(err).Str("session", key).Msg("timer: read session")
	}
	return info
}
