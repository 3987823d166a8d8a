package actors

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
)

// cronRequest is one action of the cron tool (or the CLI) for the Timer. agentID "" is an
// operator request: it sees every agent's jobs.
type cronRequest struct {
	agentID, sessionKey, action string
	args                        cron.Args
	reply                       chan cronReply // buffered; the Timer or Storage answers once
}

type cronReply struct {
	out json.RawMessage
	err error
}

// toolsRuntime is tools.Runtime for the tools of every agent: it messages the Timer (cron)
// and the sessions, through the Router (message).
type toolsRuntime struct {
	root   *actor.RootContext
	timer  *actor.PID
	router *actor.PID
}

var _ tools.Runtime = (*toolsRuntime)(nil)

func (r *toolsRuntime) Cron(ctx context.Context, agentID, sessionKey, action string, args json.RawMessage) (json.RawMessage, error) {
	var a cron.Args
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, err
	}
	if action != "" {
		a.Action = action
	}
	reply := make(chan cronReply, 1)
	r.root.Send(r.timer, &cronRequest{agentID: agentID, sessionKey: sessionKey, action: a.Action, args: a, reply: reply})
	select {
	case rep := <-reply:
		return rep.out, rep.err
	case <-ctx.Done():
		return nil, fmt.Errorf("cron: %w", ctx.Err())
	}
}

// Cron performs a cron action for the operator (the CLI through the control socket): it sees
// and changes the jobs of every agent. args is the cron tool's JSON.
func (rt *Runtime) Cron(ctx context.Context, action string, args json.RawMessage) (json.RawMessage, error) {
	r := &toolsRuntime{root: rt.system.Root, timer: timerPID(rt.gateway)}
	return r.Cron(ctx, "", "", action, args)
}

// timerPID is the Timer's PID under the Gateway (known before it is spawned).
func timerPID(gateway *actor.PID) *actor.PID {
	return actor.NewPID(gateway.Address, gateway.Id+"/timer")
}

// onRequest answers one cron action. Reads answer at once; changes answer after Storage
// made them durable.
func (t *Timer) onRequest(ctx actor.Context, req *cronRequest) {
	now := t.clock.Now()
	var out any
	var err error
	switch req.action {
	case "status":
		out = t.status(req.agentID)
	case "list":
		out = t.list(req.agentID)
	case "get":
		out, err = t.find(req)
	case "runs":
		out, err = t.runs(req)
	case "add":
		t.add(ctx, req, now)
		return
	case "update", "remove":
		t.change(ctx, req, now)
		return
	case "run":
		var j *cron.Job
		if j, err = t.find(req); err == nil {
			t.due(ctx, j.ID, "manual")
			t.arm(ctx)
			out = map[string]any{"ok": true, "id": j.ID, "queued": true}
		}
	default:
		err = fmt.Errorf("cron: unknown action %q", req.action)
	}
	req.answer(out, err)
}

func (req *cronRequest) answer(v any, err error) {
	if err != nil {
		req.reply <- cronReply{err: err}
		return
	}
	b, err := json.Marshal(v)
	req.reply <- cronReply{out: b, err: err}
}

func (t *Timer) list(agentID string) []cron.Job {
	out := []cron.Job{}
	for _, j := range t.jobs {
		if agentID == "" || j.AgentID == agentID {
			out = append(out, *j)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		return out[a].CreatedAtMs < out[b].CreatedAtMs || out[a].CreatedAtMs == out[b].CreatedAtMs && out[a].ID < out[b].ID
	})
	return out
}

func (t *Timer) find(req *cronRequest) (*cron.Job, error) {
	if req.args.ID == "" {
		return nil, errors.New("cron: id is required")
	}
	j := t.jobs[req.args.ID]
	if j == nil || req.agentID != "" && j.AgentID != req.agentID {
		return nil, fmt.Errorf("cron: no job %q (list shows the jobs)", req.args.ID)
	}
	return j, nil
}

func (t *Timer) runs(req *cronRequest) ([]cron.Run, error) {
	j, err := t.find(req)
	if err != nil {
		return nil, err
	}
	limit := req.args.Limit
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	var runs []cron.Run
	err = t.deps.Store.View(func(r persistence.Reader) error {
		runs, err = ListCronRuns(r, j.ID)
		return err
	})
	if len(runs) > limit {
		runs = runs[len(runs)-limit:]
	}
	return runs, err
}

func (t *Timer) add(ctx actor.Context, req *cronRequest, now time.Time) {
	if req.args.Job == nil {
		req.answer(nil, errors.New(`cron: add needs job {name, schedule, payload}`))
		return
	}
	agentID := req.agentID
	if agentID == "" {
		agentID = t.deps.Agents[0].ID
	}
	if n := len(t.list(agentID)); n >= t.set.MaxJobsPerAgent {
		req.answer(nil, fmt.Errorf("cron: agent %s already has %d jobs (the limit); remove some first", agentID, n))
		return
	}
	j, err := cron.NewJob(*req.args.Job, newJobID(), agentID, req.sessionKey, now)
	if err != nil {
		req.answer(nil, fmt.Errorf("cron: %w", err))
		return
	}
	t.commit(ctx, req, &j, false)
}

func (t *Timer) change(ctx actor.Context, req *cronRequest, now time.Time) {
	cur, err := t.find(req)
	if err != nil {
		req.answer(nil, err)
		return
	}
	j := *cur
	if req.action == "remove" {
		t.commit(ctx, req, &j, true)
		return
	}
	if req.args.Patch == nil {
		req.answer(nil, errors.New("cron: update needs patch {...}"))
		return
	}
	if err := j.Apply(*req.args.Patch, now); err != nil {
		req.answer(nil, fmt.Errorf("cron: %w", err))
		return
	}
	t.commit(ctx, req, &j, false)
}

// commit applies a new version of a job (or its removal) in memory and on the heap, then
// answers once Storage made it durable.
func (t *Timer) commit(ctx actor.Context, req *cronRequest, j *cron.Job, remove bool) {
	old := t.jobs[j.ID]
	var oldNext int64
	if old != nil {
		oldNext = old.State.NextRunAtMs
	}
	t.unschedule(jobKey(j.ID))
	if remove {
		delete(t.jobs, j.ID)
	} else {
		j.State.NextRunAtMs = 0
		if next, ok := j.Next(t.clock.Now()); ok && j.Enabled {
			j.State.NextRunAtMs = next.UnixMilli()
			t.schedule(jobKey(j.ID), next, "due")
		}
		t.jobs[j.ID] = j
	}
	t.arm(ctx)
	saved := *j
	t.root.Send(t.storage, &storeWrite{Apply: func(tx persistence.Tx) error {
		if oldNext != 0 {
			if err := tx.Delete(bucketNext, nextKey(oldNext, saved.ID)); err != nil {
				return err
			}
		}
		if remove {
			return tx.Delete(bucketJobs, saved.ID)
		}
		return putJob(tx, &saved)
	}, Done: func(err error) {
		if err != nil {
			req.answer(nil, fmt.Errorf("cron: could not save the job: %w", err))
		} else if remove {
			req.answer(map[string]any{"ok": true, "removed": saved.ID}, nil)
		} else {
			req.answer(saved, nil)
		}
	}})
}

func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
