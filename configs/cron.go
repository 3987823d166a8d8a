package configs

import (
	"fmt"
	"strings"
	"time"
)

// HeartbeatConfig says how often an agent wakes to read its HEARTBEAT.md. With no tasks in
// the file a heartbeat costs no LLM call.
type HeartbeatConfig struct {
	Every        string             `yaml:"every"`        // Go duration ("30m", "2h"); default 30m; "off" disables
	ActiveHours  *ActiveHoursConfig `yaml:"activeHours"`  // when heartbeats run; default all day
	Target       string             `yaml:"target"`       // last (default: the last chat used) | none | a session key
	Model        string             `yaml:"model"`        // reserved: a cheaper model for heartbeats (not used yet)
	LightContext bool               `yaml:"lightContext"` // reserved: send a smaller prompt (not used yet)
}

// ActiveHoursConfig bounds heartbeats to a daily window.
type ActiveHoursConfig struct {
	Start string `yaml:"start"` // "HH:MM", default 00:00
	End   string `yaml:"end"`   // "HH:MM", default 24:00; before start spans midnight
	TZ    string `yaml:"tz"`    // IANA zone, default the server's
}

// CronConfig bounds scheduled jobs.
type CronConfig struct {
	MaxJobsPerAgent   int `yaml:"maxJobsPerAgent"`   // default 200
	MaxConcurrentRuns int `yaml:"maxConcurrentRuns"` // cron runs in flight at once (the rest wait), default 4
}

// Interval returns the heartbeat interval: 30m by default, 0 when disabled.
func (h HeartbeatConfig) Interval() (time.Duration, error) {
	switch strings.ToLower(strings.TrimSpace(h.Every)) {
	case "":
		return 30 * time.Minute, nil
	case "off", "0", "never":
		return 0, nil
	}
	d, err := time.ParseDuration(h.Every)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write it like 30m or 2h, or off", h.Every)
	}
	if d < time.Minute {
		return 0, fmt.Errorf("%s is under one minute", d)
	}
	return d, nil
}

// Zone returns the active hours' time zone (nil: the server's).
func (a *ActiveHoursConfig) Zone() (*time.Location, error) {
	if a == nil || a.TZ == "" {
		return nil, nil
	}
	loc, err := time.LoadLocation(a.TZ)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as Europe/Berlin", a.TZ)
	}
	return loc, nil
}

func (c *Config) validateCron(v *validator) {
	v.nonNegative("cron.maxJobsPerAgent", c.Cron.MaxJobsPerAgent)
	v.nonNegative("cron.maxConcurrentRuns", c.Cron.MaxConcurrentRuns)
	for i, a := range c.Agents {
		path := fmt.Sprintf("agents[%d].heartbeat", i)
		if _, err := a.Heartbeat.Interval(); err != nil {
			v.addf("%s.every: %v", path, err)
		}
		ah := a.Heartbeat.ActiveHours
		if ah == nil {
			continue
		}
		if _, err := ah.Zone(); err != nil {
			v.addf("%s.activeHours.tz: %v", path, err)
		}
		for key, val := range map[string]string{"start": ah.Start, "end": ah.End} {
			if val != "" && !validClock(val) {
				v.addf("%s.activeHours.%s: %q is not a time of day: write it like 09:00", path, key, val)
			}
		}
	}
}

// validClock reports whether s is "HH:MM" between 00:00 and 24:00.
func validClock(s string) bool {
	_, err := time.Parse("15:04", s)
	return err == nil || s == "24:00"
}
