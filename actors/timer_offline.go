package actors

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
)

// CronOffline performs a cron action directly on the store, for `reef cron` when no gateway
// runs (the caller holds the database). Changes take effect when the gateway starts; "run"
// needs a running gateway. agentID is the default agent for add.
func CronOffline(store persistence.Store, agentID, action string, args json.RawMessage, now time.Time) (json.RawMessage, error) {
	var a cron.Args
	if err := tools.DecodeArgs(args, &a); err != nil {
		return nil, fmt.Errorf("cron: %w", err)
	}
	var jobs []cron.Job
	if err := store.View(func(r persistence.Reader) error {
		var err error
		jobs, err = ListCronJobs(r)
		return err
	}); err != nil {
		return nil, fmt.Errorf("cron: %w", err)
	}
	var cur *cron.Job
	for i := range jobs {
		if jobs[i].ID == a.ID {
			cur = &jobs[i]
		}
	}
	var out any
	var j cron.Job
	switch action {
	case "list":
		return json.Marshal(jobs)
	case "runs":
		var runs []cron.Run
		err := store.View(func(r persistence.Reader) error {
			var err error
			runs, err = ListCronRuns(r, a.ID)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("cron: %w", err)
		}
		return json.Marshal(runs)
	case "add":
		if a.Job == nil {
			return nil, errors.New("cron: add needs job")
		}
		var err error
		if j, err = cron.NewJob(*a.Job, newJobID(), agentID, "", now); err != nil {
			return nil, fmt.Errorf("cron: %w", err)
		}
	case "update", "remove":
		if cur == nil {
			return nil, fmt.Errorf("cron: no job %q", a.ID)
		}
		j = *cur
		if action == "update" && a.Patch != nil {
			if err := j.Apply(*a.Patch, now); err != nil {
				return nil, fmt.Errorf("cron: %w", err)
			}
		}
	default:
		return nil, fmt.Errorf("cron: %s needs a running reef (start `reef gateway`)", action)
	}
	oldNext := j.State.NextRunAtMs
	j.State.NextRunAtMs = 0
	if next, ok := j.Next(now); ok && j.Enabled {
		j.State.NextRunAtMs = next.UnixMilli()
	}
	out = j
	if action == "remove" {
		out = map[string]any{"ok": true, "removed": j.ID}
	}
	err := store.Update(func(tx persistence.Tx) error {
		if oldNext != 0 {
			if err := tx.Delete(bucketNext, nextKey(oldNext, j.ID)); err != nil {
				return err
			}
		}
		if action == "remove" {
			return tx.Delete(bucketJobs, j.ID)
		}
		return putJob(tx, &j)
	})
	if err != nil {
		return nil, fmt.Errorf("cron: %w", err)
	}
	return json.Marshal(out)
}

// ListCronJobs reads every stored job, oldest first.
func ListCronJobs(r persistence.Reader) ([]cron.Job, error) {
	jobs := []cron.Job{}
	err := r.Scan(bucketJobs, "", func(_ string, v []byte) error {
		var j cron.Job
		if err := json.Unmarshal(v, &j); err != nil {
			return err
		}
		jobs = append(jobs, j)
		return nil
	})
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].CreatedAtMs < jobs[b].CreatedAtMs })
	return jobs, err
}

// ListCronRuns reads a job's recorded runs, oldest first.
func ListCronRuns(r persistence.Reader, id string) ([]cron.Run, error) {
	runs := []cron.Run{}
	err := r.Scan(bucketRuns, id+":", func(_ string, v []byte) error {
		var run cron.Run
		if err := json.Unmarshal(v, &run); err != nil {
			return err
		}
		runs = append(runs, run)
		return nil
	})
	return runs, err
}
