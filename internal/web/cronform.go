package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/reefgw/reef/schedule"
)

// cronForm is the Cron page's add/edit form, with the flags of `reef cron add`: a schedule
// (cron expression, interval as people write it, or a one-shot time) in a time zone, the
// text, whether it runs in its own session (agentTurn) and where the reply goes.
type cronForm struct {
	ID, Name         string
	Kind             string // cron | every | at
	Expr, Every, At  string
	TZ               string
	Payload, Text    string // payload kind systemEvent | agentTurn
	Deliver          string // announce | none | channel:chat-id, as reef cron add -deliver
	Enabled, Present bool   // Present: the form held the enabled box
}

func readCronForm(r *http.Request) cronForm {
	v := func(k string) string { return strings.TrimSpace(r.FormValue(k)) }
	return cronForm{ID: v("id"), Name: v("name"), Kind: v("kind"), Expr: v("expr"), Every: v("every"), At: v("at"),
		TZ: v("tz"), Payload: v("payload"), Text: r.FormValue("text"), Deliver: v("deliver"),
		Enabled: r.FormValue("enabled") != "", Present: r.FormValue("enabledShown") != ""}
}

// formOf fills the form from a stored job.
func formOf(j schedule.Job) cronForm {
	f := cronForm{ID: j.ID, Name: j.Name, Kind: j.Schedule.Kind, Expr: j.Schedule.Expr, At: j.Schedule.At, TZ: j.Schedule.TZ,
		Payload: j.Payload.Kind, Text: j.Text(), Deliver: j.Delivery.Mode, Enabled: j.Enabled, Present: true}
	if j.Schedule.EveryMs > 0 {
		f.Every = schedule.FormatEvery(time.Duration(j.Schedule.EveryMs) * time.Millisecond)
	}
	if j.Delivery.Mode == "channel" {
		f.Deliver = j.Delivery.Channel + ":" + j.Delivery.To
	}
	return f
}

// filled reports whether the form holds a schedule to preview.
func (f cronForm) filled() bool { return f.Expr != "" || f.Every != "" || f.At != "" }

// spec is the form's schedule.
func (f cronForm) spec() (schedule.Spec, error) {
	s := schedule.Spec{Kind: f.Kind, TZ: f.TZ}
	switch f.Kind {
	case "cron":
		s.Expr = f.Expr
	case "every":
		d, err := schedule.ParseEvery(f.Every)
		if err != nil {
			return s, err
		}
		s.EveryMs, s.TZ = d.Milliseconds(), ""
	case "at":
		s.At = f.At
	default:
		return s, errors.New("choose when it runs: a cron expression, every (an interval) or at (a time)")
	}
	return s, nil
}

// input is the job the form describes, as `reef cron add` builds it.
func (f cronForm) input() (schedule.JobInput, error) {
	s, err := f.spec()
	if err != nil {
		return schedule.JobInput{}, err
	}
	p := schedule.Payload{Kind: "systemEvent", Text: f.Text}
	if f.Payload == "agentTurn" {
		p = schedule.Payload{Kind: "agentTurn", Message: f.Text}
	}
	d := schedule.Delivery{Mode: f.Deliver}
	if ch, to, ok := strings.Cut(f.Deliver, ":"); ok {
		d = schedule.Delivery{Mode: "channel", Channel: ch, To: to}
	}
	in := schedule.JobInput{Name: f.Name, Schedule: &s, Payload: &p, Delivery: &d}
	if f.Present {
		in.Enabled = &f.Enabled
	}
	return in, nil
}

// preview is the schedule in words with its next run: "every day at 08:00 Asia/Shanghai —
// next: Mon 7 Dec 08:00".
func (f cronForm) preview(now time.Time) (string, error) {
	s, err := f.spec()
	if err != nil {
		return "", err
	}
	if err := s.Validate(now); err != nil {
		return "", err
	}
	return Human(schedule.Job{Schedule: s, CreatedAtMs: now.UnixMilli(), Enabled: true}, now), nil
}

// Human is a job's schedule in words with its next run in the schedule's zone.
func Human(j schedule.Job, now time.Time) string {
	text := j.Schedule.Human()
	if !j.Enabled {
		return text + " — disabled"
	}
	next, ok := j.Next(now)
	if j.State.NextRunAtMs != 0 {
		next, ok = time.UnixMilli(j.State.NextRunAtMs), true
	}
	if !ok {
		return text + " — no next run"
	}
	loc, err := j.Schedule.Location()
	if err != nil {
		loc = time.UTC
	}
	return text + " — next: " + next.In(loc).Format("Mon 2 Jan 15:04")
}
