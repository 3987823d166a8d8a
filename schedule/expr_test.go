package schedule

import (
	"strings"
	"testing"
	"time"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestExprNext(t *testing.T) {
	utc := time.UTC
	tests := []struct {
		expr, tz, after, want string
	}{
		{"* * * * *", "UTC", "2026-01-01T10:00:30Z", "2026-01-01T10:01:00Z"},
		{"10 18 * * *", "Asia/Shanghai", "2026-11-22T00:00:00Z", "2026-11-22T10:10:00Z"},
		{"10 18 * * *", "Asia/Shanghai", "2026-11-22T10:10:00Z", "2026-11-23T10:10:00Z"},
		{"*/15 9-17 * * mon-fri", "UTC", "2026-11-21T12:00:00Z", "2026-11-23T09:00:00Z"}, // Saturday → Monday
		{"0 0 1 jan,jul *", "UTC", "2026-02-01T00:00:00Z", "2026-07-01T00:00:00Z"},
		{"0 12 * * 7", "UTC", "2026-11-22T12:00:00Z", "2026-11-29T12:00:00Z"}, // 7 is Sunday
		{"0 0 29 2 *", "UTC", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"0 0 13 * 5", "UTC", "2026-11-01T00:00:00Z", "2026-11-06T00:00:00Z"}, // day 13 or a Friday
		{"30 8 * * *", "Europe/Berlin", "2026-07-01T00:00:00Z", "2026-07-01T06:30:00Z"},
		// DST: 02:30 does not exist on 2026-03-08 in New York: it runs once, when the gap ends (03:00 EDT).
		{"30 2 * * *", "America/New_York", "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z"},
		{"30 2 * * *", "America/New_York", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"},
		// 01:30 happens twice on 2026-11-01: it runs at the first (EDT, 05:30 UTC) only.
		{"30 1 * * *", "America/New_York", "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"},
		{"30 1 * * *", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
	}
	for _, tt := range tests {
		e, err := ParseExpr(tt.expr)
		if err != nil {
			t.Fatalf("ParseExpr(%q): %v", tt.expr, err)
		}
		after, _ := time.Parse(time.RFC3339, tt.after)
		got, ok := e.Next(after, mustLoad(t, tt.tz))
		if !ok || got.In(utc).Format(time.RFC3339) != tt.want {
			t.Errorf("%q in %s after %s = %v (%v), want %s", tt.expr, tt.tz, tt.after, got.In(utc), ok, tt.want)
		}
	}
}

// A job every 15 minutes runs once per wall time: the skipped times 02:00-02:45 collapse into
// the run at 03:00, and the repeated hour 01:00-01:45 runs once.
func TestExprDSTRunsOnce(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	e, _ := ParseExpr("*/15 * * * *")
	count := func(from, to string) int {
		a, _ := time.Parse(time.RFC3339, from)
		b, _ := time.Parse(time.RFC3339, to)
		n := 0
		for t1, ok := e.Next(a, ny); ok && t1.Before(b); t1, ok = e.Next(t1, ny) {
			n++
		}
		return n
	}
	// Spring-forward day (from just before 00:00 EST): 23 wall hours exist.
	if got := count("2026-03-08T04:59:59Z", "2026-03-09T04:00:00Z"); got != 23*4 {
		t.Errorf("spring-forward day: %d runs, want %d", got, 23*4)
	}
	// Fall-back day: 25 real hours, the repeated hour runs once: 24*4.
	if got := count("2026-11-01T03:59:59Z", "2026-11-02T05:00:00Z"); got != 24*4 {
		t.Errorf("fall-back day: %d runs, want %d", got, 24*4)
	}
}

func TestParseExprRefuses(t *testing.T) {
	for _, expr := range []string{
		"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *",
		"* * * 13 *", "* * * * 8", "a * * * *", "*/0 * * * *", "5-1 * * * *", "1,,2 * * * *",
		"0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *", "@daily", "* * * foo *",
	} {
		if _, err := ParseExpr(expr); err == nil {
			t.Errorf("ParseExpr(%q) accepted", expr)
		} else if !strings.Contains(err.Error(), "cron expression") {
			t.Errorf("ParseExpr(%q) error %q does not name the expression", expr, err)
		}
	}
}
