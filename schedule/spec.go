package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Location returns the schedule's time zone (UTC when none is set).
func (s Spec) Location() (*time.Location, error) {
	if s.TZ == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(s.TZ, "local") {
		return nil, errors.New(`tz "Local" depends on the server; name an IANA zone such as "Asia/Shanghai"`)
	}
	loc, err := time.LoadLocation(s.TZ)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q; use an IANA name such as \"Europe/Berlin\" or \"UTC\"", s.TZ)
	}
	return loc, nil
}

// Validate checks the schedule. now refuses one-shot times already past.
func (s Spec) Validate(now time.Time) error {
	loc, err := s.Location()
	if err != nil {
		return err
	}
	switch s.Kind {
	case "cron":
		if s.EveryMs != 0 || s.At != "" {
			return errors.New(`schedule kind "cron" takes expr and tz only`)
		}
		e, err := ParseExpr(s.Expr)
		if err != nil {
			return err
		}
		if _, ok := e.Next(now, loc); !ok {
			return fmt.Errorf("cron expression %q never fires", s.Expr)
		}
	case "every":
		if s.Expr != "" || s.At != "" {
			return errors.New(`schedule kind "every" takes everyMs only`)
		}
		if s.EveryMs < MinEvery.Milliseconds() {
			return fmt.Errorf("everyMs %d is under one minute (60000); reef does not run jobs more often", s.EveryMs)
		}
	case "at":
		if s.Expr != "" || s.EveryMs != 0 {
			return errors.New(`schedule kind "at" takes at and tz only`)
		}
		at, err := s.AtTime()
		if err != nil {
			return err
		}
		if !at.After(now) {
			return fmt.Errorf("at %s is in the past (now %s)", at.Format(time.RFC3339), now.In(loc).Format(time.RFC3339))
		}
	case "":
		return errors.New(`schedule.kind is required: "cron" (expr, tz), "every" (everyMs) or "at" (at)`)
	default:
		return fmt.Errorf("schedule.kind %q is not cron, every or at", s.Kind)
	}
	return nil
}

// AtTime parses a one-shot time: RFC 3339, or a wall time "2006-01-02T15:04[:05]" in TZ.
func (s Spec) AtTime() (time.Time, error) {
	loc, err := s.Location()
	if err != nil {
		return time.Time{}, err
	}
	if t, err := time.Parse(time.RFC3339, s.At); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s.At, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("at %q is not a time: use RFC 3339 (2026-03-08T09:00:00+08:00) or 2026-03-08T09:00 with tz", s.At)
}

// Next returns when the job runs next after after, and false when it never will (a one-shot
// that ran, a broken schedule).
func (j *Job) Next(after time.Time) (time.Time, bool) {
	s := j.Schedule
	switch s.Kind {
	case "cron":
		loc, err := s.Location()
		if err != nil {
			return time.Time{}, false
		}
		e, err := ParseExpr(s.Expr)
		if err != nil {
			return time.Time{}, false
		}
		return e.Next(after, loc)
	case "every":
		every := time.Duration(s.EveryMs) * time.Millisecond
		if every < MinEvery {
			return time.Time{}, false
		}
		anchor := time.UnixMilli(j.CreatedAtMs)
		if after.Before(anchor) {
			return anchor.Add(every), true
		}
		n := after.Sub(anchor)/every + 1
		return anchor.Add(n * every), true
	case "at":
		at, err := s.AtTime()
		if err != nil || !at.After(after) || j.State.LastRunAtMs != 0 {
			return time.Time{}, false
		}
		return at, true
	}
	return time.Time{}, false
}

// Describe is a one-line human description of the schedule.
func (s Spec) Describe() string {
	switch s.Kind {
	case "cron":
		return fmt.Sprintf("cron %q %s", s.Expr, orUTC(s.TZ))
	case "every":
		return "every " + FormatEvery(time.Duration(s.EveryMs)*time.Millisecond)
	case "at":
		return "at " + s.At
	}
	return s.Kind
}

func orUTC(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}
