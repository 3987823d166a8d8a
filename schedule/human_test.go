package schedule

import (
	"testing"
	"time"
)

func TestHumanSchedules(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: "cron", Expr: "0 8 * * *", TZ: "Asia/Shanghai"}, "every day at 08:00 Asia/Shanghai"},
		{Spec{Kind: "cron", Expr: "30 9 * * 1-5"}, "on weekdays at 09:30 UTC"},
		{Spec{Kind: "cron", Expr: "0 18 * * 5", TZ: "Europe/Berlin"}, "every Friday at 18:00 Europe/Berlin"},
		{Spec{Kind: "cron", Expr: "0 7 1 * *"}, "on day 1 of every month at 07:00 UTC"},
		{Spec{Kind: "cron", Expr: "*/15 * * * *"}, "every 15 minutes UTC"},
		{Spec{Kind: "cron", Expr: "5 * * * *"}, "every hour at :05 UTC"},
		{Spec{Kind: "cron", Expr: "0 */2 1 * *"}, `cron "0 */2 1 * *" UTC`},
		{Spec{Kind: "every", EveryMs: 3600000}, "every 1h"},
		{Spec{Kind: "every", EveryMs: 90 * 60000}, "every 1h30m"},
		{Spec{Kind: "every", EveryMs: 2 * 86400000}, "every 2d"},
		{Spec{Kind: "at", At: "2026-03-08T09:00", TZ: "Europe/Berlin"}, "once at 2026-03-08 09:00 Europe/Berlin"},
	} {
		if got := tc.s.Human(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
	if got := (Spec{Kind: "every", EveryMs: 3600000}).Describe(); got != "every 1h" {
		t.Errorf("Describe says %q, want every 1h (not 3600000 ms, not 1h0m0s)", got)
	}
}

func TestParseEvery(t *testing.T) {
	for in, want := range map[string]time.Duration{"1h": time.Hour, "90m": 90 * time.Minute, "1d": 24 * time.Hour,
		"2d12h": 60 * time.Hour, " 1H30M ": 90 * time.Minute} {
		if got, err := ParseEvery(in); err != nil || got != want {
			t.Errorf("ParseEvery(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0m", "soon", "xd", "-1h"} {
		if _, err := ParseEvery(in); err == nil {
			t.Errorf("ParseEvery(%q) took it", in)
		}
	}
	for d, want := range map[time.Duration]string{time.Hour: "1h", 90 * time.Minute: "1h30m", 25 * time.Hour: "1d1h", time.Minute: "1m"} {
		if got := FormatEvery(d); got != want {
			t.Errorf("FormatEvery(%v) = %q, want %q", d, got, want)
		}
	}
}
