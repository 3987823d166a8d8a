package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reefgw/reef/persistence"
)

// Offline performs a cron action directly on the store, for `reef cron` when no gateway
// runs (the caller holds the database). Changes take effect when the gateway starts; "run"
// needs a running gateway. agentID is the default agent for add. The answer is the JSON the
// Timer would give.
func Offline(store persistence.Store, agentID, action string, a Args, now time.Time) (json.RawMessage, error) {
	var jobs []Job
	if err := store.View(func(r persistence.Reader) error {
		var err error
		jobs, err = ListJobs(r)
		return err
	}); err != nil {
		return nil, fmt.Errorf("cron: %w", err)
	}
	var cur *Job
	for i := range jobs {
		if jobs[i].ID == a.ID {
			cur = &jobs[i]
		}
	}
	var out any
	var j Job
	switch action {
	case "list":
		return json.Marshal(jobs)
	case "runs":
		var runs []Run
		err := store.View(func(r persistence.Reader) error {
			var err error
			runs, err = ListRuns(r, a.ID)
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
		if j, err = NewJob(*a.Job, NewID(), agentID, "", now); err != nil {
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
		if err := Unindex(tx, oldNext, j.ID); err != nil {
			return err
		}
		if action == "remove" {
			return DeleteJob(tx, j.ID)
		}
		return PutJob(tx, &j)
	})
	if err != nil {
		return nil, fmt.Errorf("cron: %w", err)
	}
	return json.Marshal(out)
}
