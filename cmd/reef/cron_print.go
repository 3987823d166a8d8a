package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/schedule"
)

// printCron shows a cron command's answer: tables for list and runs, one line otherwise.
func printCron(stdout, stderr io.Writer, verb string, out json.RawMessage) int {
	switch verb {
	case "list":
		var jobs []schedule.Job
		if err := json.Unmarshal(out, &jobs); err != nil {
			fmt.Fprintf(stderr, "reef cron: %v\n", err)
			return 1
		}
		printJobs(stdout, jobs)
	case "runs":
		var runs []schedule.Run
		if err := json.Unmarshal(out, &runs); err != nil {
			fmt.Fprintf(stderr, "reef cron: %v\n", err)
			return 1
		}
		for _, r := range runs {
			fmt.Fprintf(stdout, "%s  %-8s %-8s %s\n", time.UnixMilli(r.AtMs).UTC().Format("2006-01-02 15:04 UTC"), r.Reason, r.Status, termtext.ID(r.SessionKey))
		}
		if len(runs) == 0 {
			fmt.Fprintln(stdout, "no runs yet")
		}
	case "add", "enable", "disable":
		var j schedule.Job
		if err := json.Unmarshal(out, &j); err != nil {
			fmt.Fprintf(stderr, "reef cron: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s %s: %s, next run %s\n", verbDone(verb), j.ID, j.Schedule.Describe(), nextRun(j))
	case "rm":
		var r struct{ Removed string }
		if err := json.Unmarshal(out, &r); err != nil {
			fmt.Fprintf(stderr, "reef cron: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "removed %s\n", r.Removed)
	case "run":
		var r struct{ ID string }
		if err := json.Unmarshal(out, &r); err != nil {
			fmt.Fprintf(stderr, "reef cron: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "started %s: it runs now (`reef cron runs %s` shows how it went)\n", r.ID, r.ID)
	default:
		fmt.Fprintf(stdout, "%s\n", out)
	}
	return 0
}

func verbDone(verb string) string {
	return map[string]string{"add": "added", "enable": "enabled", "disable": "disabled"}[verb]
}

func printJobs(w io.Writer, jobs []schedule.Job) {
	if len(jobs) == 0 {
		fmt.Fprintln(w, "no cron jobs")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCHEDULE\tNEXT RUN\tLAST\tSTATUS")
	for _, j := range jobs {
		last := "-"
		if j.State.LastRunAtMs != 0 {
			last = inZone(j, j.State.LastRunAtMs)
		}
		status := orDash(j.State.LastStatus)
		if !j.Enabled {
			status = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.ID(j.ID), orDash(termtext.Line(j.Name)), j.Schedule.Describe(), nextRun(j), last, status)
	}
	tw.Flush()
}

// nextRun shows the next run in the job's own time zone.
func nextRun(j schedule.Job) string {
	if !j.Enabled || j.State.NextRunAtMs == 0 {
		return "-"
	}
	return inZone(j, j.State.NextRunAtMs)
}

func inZone(j schedule.Job, ms int64) string {
	loc, err := j.Schedule.Location()
	if err != nil {
		loc = time.UTC
	}
	return time.UnixMilli(ms).In(loc).Format("2006-01-02 15:04 MST")
}

// timerSettings turns the configuration into the Timer's settings (Validate has checked it).
// startRuntime passes them with actors.WithTimer.
func timerSettings(cfg *configs.Config) actors.TimerSettings {
	set := actors.TimerSettings{MaxJobsPerAgent: cfg.Cron.MaxJobsPerAgent, MaxConcurrentRuns: cfg.Cron.MaxConcurrentRuns,
		Heartbeats: map[string]actors.HeartbeatSettings{}}
	for _, a := range cfg.Agents {
		hb := a.Heartbeat
		every, err := hb.Interval()
		if err != nil || every == 0 {
			every = -1 // disabled
		}
		s := actors.HeartbeatSettings{Every: every, Target: hb.Target}
		if ah := hb.ActiveHours; ah != nil {
			s.ActiveStart, s.ActiveEnd = ah.Start, ah.End
			s.ActiveZone, _ = ah.Zone()
		}
		set.Heartbeats[a.ID] = s
	}
	return set
}
