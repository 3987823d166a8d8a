package schedule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FormatEvery writes an interval as people write it: 1h, 90m → 1h30m, 2d, 45m.
func FormatEvery(d time.Duration) string {
	if d <= 0 {
		return "0m"
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	if b.Len() == 0 {
		return d.String()
	}
	return b.String()
}

// ParseEvery reads an interval as people write it: Go's durations (1h, 90m, 1h30m) and days
// (1d, 2d12h).
func ParseEvery(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	var days time.Duration
	if i := strings.Index(s, "d"); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not an interval: write 30m, 1h, 1h30m or 1d", s)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
	}
	var rest time.Duration
	if s != "" {
		var err error
		if rest, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not an interval: write 30m, 1h, 1h30m or 1d", s)
		}
	}
	d := days + rest
	if d <= 0 {
		return 0, errors.New("the interval must be more than zero")
	}
	return d, nil
}

var weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// Human is the schedule in words: "every day at 08:00 Asia/Shanghai", "every 1h", "on
// weekdays at 09:30 UTC", "once at 2026-03-08 09:00 Europe/Berlin". An expression it has no
// words for is shown as itself: `cron "0 */2 1 * *" UTC`.
func (s Spec) Human() string {
	switch s.Kind {
	case "every":
		return "every " + FormatEvery(time.Duration(s.EveryMs)*time.Millisecond)
	case "at":
		if t, err := s.AtTime(); err == nil {
			loc, _ := s.Location()
			return "once at " + t.In(loc).Format("2006-01-02 15:04") + " " + orUTC(s.TZ)
		}
		return "once at " + s.At
	case "cron":
		if w := cronWords(s.Expr); w != "" {
			return w + " " + orUTC(s.TZ)
		}
	}
	return s.Describe()
}

// cronWords says common five-field expressions in words; "" for the others.
func cronWords(expr string) string {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return ""
	}
	min, hour, dom, mon, dow := f[0], f[1], f[2], f[3], f[4]
	if mon != "*" {
		return ""
	}
	if n, ok := strings.CutPrefix(min, "*/"); ok && hour == "*" && dom == "*" && dow == "*" {
		return "every " + n + " minutes"
	}
	m, errM := strconv.Atoi(min)
	if errM != nil || m < 0 || m > 59 {
		return ""
	}
	if hour == "*" && dom == "*" && dow == "*" {
		return fmt.Sprintf("every hour at :%02d", m)
	}
	h, errH := strconv.Atoi(hour)
	if errH != nil || h < 0 || h > 23 {
		return ""
	}
	at := fmt.Sprintf("at %02d:%02d", h, m)
	switch {
	case dom == "*" && dow == "*":
		return "every day " + at
	case dom == "*" && (dow == "1-5" || dow == "MON-FRI"):
		return "on weekdays " + at
	case dom == "*" && (dow == "0,6" || dow == "6,0" || dow == "SAT,SUN"):
		return "on weekends " + at
	case dom == "*":
		if d, err := strconv.Atoi(dow); err == nil && d >= 0 && d <= 7 {
			return "every " + weekdays[d%7] + " " + at
		}
	case dow == "*":
		if d, err := strconv.Atoi(dom); err == nil && d >= 1 && d <= 31 {
			return fmt.Sprintf("on day %d of every month %s", d, at)
		}
	}
	return ""
}
