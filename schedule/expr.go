package schedule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Expr is a parsed five-field cron expression: minute hour day-of-month month day-of-week.
// Fields accept *, numbers, names (jan-dec, sun-sat), ranges a-b, steps */n and a-b/n, and
// comma lists. As in Vixie cron, when both day fields are restricted a day matches either.
type Expr struct {
	minute, hour, dom, month, dow uint64 // bit i set = value i allowed
	domStar, dowStar              bool
}

type field struct {
	name     string
	min, max int
	names    []string // names[i] stands for min+i
}

var fields = [5]field{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// ParseExpr parses a five-field expression. It refuses expressions that can never fire
// (such as "0 0 31 2 *").
func ParseExpr(s string) (Expr, error) {
	parts := strings.Fields(s)
	if len(parts) != 5 {
		return Expr{}, fmt.Errorf("cron expression %q must have 5 fields (minute hour day-of-month month day-of-week), got %d", s, len(parts))
	}
	var bits [5]uint64
	for i, p := range parts {
		b, err := parseField(p, fields[i])
		if err != nil {
			return Expr{}, fmt.Errorf("cron expression %q: %s field: %w", s, fields[i].name, err)
		}
		bits[i] = b
	}
	if bits[4]&(1<<7) != 0 { // 7 is Sunday too
		bits[4] = bits[4]&^(1<<7) | 1
	}
	e := Expr{minute: bits[0], hour: bits[1], dom: bits[2], month: bits[3], dow: bits[4],
		domStar: parts[2] == "*" || strings.HasPrefix(parts[2], "*/"), dowStar: parts[4] == "*" || strings.HasPrefix(parts[4], "*/")}
	if !e.possible() {
		return Expr{}, fmt.Errorf("cron expression %q never fires: no month has that day", s)
	}
	return e, nil
}

// possible reports whether some month of some year has a matching day.
func (e Expr) possible() bool {
	if e.domStar || !e.dowStar { // restricted weekdays can always match
		return true
	}
	days := [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for m := 1; m <= 12; m++ {
		if e.month&(1<<m) == 0 {
			continue
		}
		for d := 1; d <= days[m]; d++ {
			if e.dom&(1<<d) != 0 {
				return true
			}
		}
	}
	return false
}

func parseField(s string, f field) (uint64, error) {
	var bits uint64
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			return 0, errors.New("empty list item")
		}
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 || n > f.max {
				return 0, fmt.Errorf("bad step %q (want 1-%d)", stepText, f.max)
			}
			step = n
		}
		lo, hi := f.min, f.max
		if f.name == "day of week" {
			hi = 6
		}
		if rng != "*" {
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = value(a, f); err != nil {
				return 0, err
			}
			hi = lo
			if isRange {
				if hi, err = value(b, f); err != nil {
					return 0, err
				}
				if hi < lo {
					return 0, fmt.Errorf("range %q runs backwards", rng)
				}
			} else if hasStep {
				hi = f.max
			}
		}
		for v := lo; v <= hi; v += step {
			bits |= 1 << v
		}
	}
	return bits, nil
}

func value(s string, f field) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number or a name", s)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", n, f.min, f.max)
	}
	return n, nil
}

// dayMatches applies the day-of-month / day-of-week rule.
func (e Expr) dayMatches(t time.Time) bool {
	dom := e.dom&(1<<t.Day()) != 0
	dow := e.dow&(1<<int(t.Weekday())) != 0
	if e.domStar || e.dowStar {
		return dom && dow
	}
	return dom || dow
}

// Next returns the first time after after at which e fires in loc, and false if there is
// none within eight years. Wall times are what count: a time that a spring-forward gap skips
// fires once, at the instant the gap ends; a time that a fall-back overlap repeats fires
// once, at its first occurrence.
func (e Expr) Next(after time.Time, loc *time.Location) (time.Time, bool) {
	w := after.In(loc)
	day := time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)
	for i := 0; i < 366*8; i++ {
		d := day.AddDate(0, 0, i)
		if e.month&(1<<int(d.Month())) == 0 || !e.dayMatches(d) {
			continue
		}
		for h := 0; h < 24; h++ {
			if e.hour&(1<<h) == 0 {
				continue
			}
			for m := 0; m < 60; m++ {
				if e.minute&(1<<m) == 0 {
					continue
				}
				if t := wallInstant(d.Year(), d.Month(), d.Day(), h, m, loc); t.After(after) {
					return t, true
				}
			}
		}
	}
	return time.Time{}, false
}

// wallInstant returns the instant loc's clocks show the wall time: the earlier one when the
// wall time happens twice, the end of the gap when it is skipped.
func wallInstant(y int, mo time.Month, d, h, mi int, loc *time.Location) time.Time {
	wall := time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	_, before := wall.Add(-36 * time.Hour).In(loc).Zone()
	_, after := wall.Add(36 * time.Hour).In(loc).Zone()
	var found []time.Time
	for _, off := range []int{before, after} {
		t := wall.Add(-time.Duration(off) * time.Second)
		if _, o := t.In(loc).Zone(); o == off {
			found = append(found, t)
		}
	}
	switch {
	case len(found) == 2 && found[1].Before(found[0]):
		return found[1]
	case len(found) > 0:
		return found[0]
	}
	// In the gap: the instant the clocks jump, where the zone in force under the old offset began.
	start, _ := wall.Add(-time.Duration(before) * time.Second).In(loc).ZoneBounds()
	return start
}
