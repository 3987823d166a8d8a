package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/tools"
)

// cronRequest is one action of the cron tool (or the CLI) for the Timer. agentID "" is an
// operator request: it sees every agent's jobs.
type cronRequest struct {
	agentID, sessionKey, action string
	args                        schedule.Args
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
	store  persistence.Store // sessions_list, sessions_history (subagent_tools.go)
}

var _ tools.Runtime = (*toolsRuntime)(nil)

func (r *toolsRuntime) Cron(ctx context.Context, agentID, sessionKey, action string, args json.RawMessage) (json.RawMessage, error) {
	var a schedule.Args
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
		var j *schedule.Job
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

func (t *Timer) list(agentID string) []schedule.Job {
	out := []schedule.Job{}
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

func (t *Timer) find(req *cronRequest) (*schedule.Job, error) {
	if req.args.ID == "" {
		return nil, errors.New("cron: id is required")
	}
	j := t.jobs[req.args.ID]
	if j == nil || req.agentID != "" && j.AgentID != req.agentID {
		return nil, fmt.Errorf("cron: no job %q (list shows the jobs)", req.args.ID)
	}
	return j, nil
}

func (t *Timer) runs(req *cronRequest) ([]schedule.Run, error) {
	j, err := t.find(req)
	if err != nil {
		return nil, err
	}
	limit := req.args.Limit
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	var runs []schedule.Run
	err = t.deps.Store.View(func(r persistence.Reader) error {
		runs, err = schedule.ListRuns(r, j.ID)
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
		agentID = t.deps.agents()[0].ID
	}
	if n := len(t.list(agentID)); n >= t.set.MaxJobsPerAgent {
		req.answer(nil, fmt.Errorf("cron: agent %s already has %d jobs (the limit); remove some first", agentID, n))
		return
	}
	j, err := schedule.NewJob(*req.args.Job, schedule.NewID(), agentID, req.sessionKey, now)
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
func (t *Timer) commit(ctx actor.Context, req *cronRequest, j *schedule.Job, remove bool) {
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
		if err := schedule.Unindex(tx, oldNext, saved.ID); err != nil {
			return err
		}
		if remove {
			return schedule.DeleteJob(tx, saved.ID)
		}
		return schedule.PutJob(tx, &saved)
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
