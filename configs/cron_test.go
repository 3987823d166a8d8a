package configs

import (
	"strings"
	"testing"
	"time"
)

func TestHeartbeatInterval(t *testing.T) {
	tests := []struct {
		every string
		want  time.Duration
		bad   bool
	}{
		{"", 30 * time.Minute, false}, {"1h", time.Hour, false}, {"off", 0, false},
		{"30s", 0, true}, {"soon", 0, true},
	}
	for _, tt := range tests {
		got, err := HeartbeatConfig{Every: tt.every}.Interval()
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("Interval(%q) = %v, %v; want %v, error %v", tt.every, got, err, tt.want, tt.bad)
		}
	}
}

func TestValidateCronAndHeartbeat(t *testing.T) {
	c := &Config{Cron: CronConfig{MaxJobsPerAgent: -1}, Agents: []AgentConfig{{ID: "main", Heartbeat: HeartbeatConfig{
		Every: "10s", ActiveHours: &ActiveHoursConfig{Start: "9am", End: "24:00", TZ: "Mars/Base"}}}}}
	var v validator
	c.validateCron(&v)
	got := ""
	for _, p := range v.problems {
		got += p.Error() + "\n"
	}
	for _, want := range []string{"cron.maxJobsPerAgent", "agents[0].heartbeat.every", "agents[0].heartbeat.activeHours.tz",
		`agents[0].heartbeat.activeHours.start: "9am"`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "activeHours.end") {
		t.Errorf("24:00 refused:\n%s", got)
	}
}
