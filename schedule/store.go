package schedule

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/reefgw/reef/persistence"
)

// The jobs in the store: one record per job, an index of next runs by time, and a record of
// every run. Integer parts are zero-padded so that keys sort in time order.
const (
	bucketJobs = "cron/jobs" // <id> → Job
	bucketNext = "cron/next" // <next run, unix ms>:<id> → id
	bucketRuns = "cron/runs" // <id>:<run, unix ms> → Run
)

func nextKey(ms int64, id string) string { return fmt.Sprintf("%020d:%s", ms, id) }
func runKey(id string, ms int64) string  { return fmt.Sprintf("%s:%020d", id, ms) }

// NewID returns a new random job id.
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// PutJob stores j, and indexes its next run when it is enabled and has one.
func PutJob(tx persistence.Tx, j *Job) error {
	if j.Enabled && j.State.NextRunAtMs != 0 {
		if err := tx.Put(bucketNext, nextKey(j.State.NextRunAtMs, j.ID), []byte(j.ID)); err != nil {
			return err
		}
	}
	return putJSON(tx, bucketJobs, j.ID, j)
}

// Unindex drops the index entry of a next run of job id at nextMs (nothing when nextMs is 0).
func Unindex(tx persistence.Tx, nextMs int64, id string) error {
	if nextMs == 0 {
		return nil
	}
	return tx.Delete(bucketNext, nextKey(nextMs, id))
}

// DeleteJob removes job id's record (its runs stay; Unindex its next run).
func DeleteJob(tx persistence.Tx, id string) error { return tx.Delete(bucketJobs, id) }

// JobExists reports whether job id is stored.
func JobExists(r persistence.Reader, id string) (bool, error) {
	_, ok, err := r.Get(bucketJobs, id)
	return ok, err
}

// PutRun records a run.
func PutRun(tx persistence.Tx, run Run) error {
	return putJSON(tx, bucketRuns, runKey(run.JobID, run.AtMs), run)
}

// ListJobs reads every stored job, oldest first.
func ListJobs(r persistence.Reader) ([]Job, error) {
	jobs := []Job{}
	err := r.Scan(bucketJobs, "", func(_ string, v []byte) error {
		var j Job
		if err := json.Unmarshal(v, &j); err != nil {
			return err
		}
		jobs = append(jobs, j)
		return nil
	})
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].CreatedAtMs < jobs[b].CreatedAtMs })
	return jobs, err
}

// ListRuns reads a job's recorded runs, oldest first.
func ListRuns(r persistence.Reader, id string) ([]Run, error) {
	runs := []Run{}
	err := r.Scan(bucketRuns, id+":", func(_ string, v []byte) error {
		var run Run
		if err := json.Unmarshal(v, &run); err != nil {
			return err
		}
		runs = append(runs, run)
		return nil
	})
	return runs, err
}

func putJSON(tx persistence.Tx, bucket, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(bucket, key, b)
}

// GetJob reads job id, and whether it is stored.
func GetJob(r persistence.Reader, id string) (Job, bool, error) {
	raw, ok, err := r.Get(bucketJobs, id)
	if err != nil || !ok {
		return Job{}, false, err
	}
	var j Job
	if err := json.Unmarshal(raw, &j); err != nil {
		return Job{}, false, fmt.Errorf("cron: job %s: %w", id, err)
	}
	return j, true, nil
}
