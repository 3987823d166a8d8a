package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestNewJobRefusesBadInput(t *testing.T) {
	tests := []struct {
		name, job, want string
	}{
		{"garbage expr", `{"schedule":{"kind":"cron","expr":"every day"},"payload":{"kind":"systemEvent","text":"x"}}`, "5 fields"},
		{"feb 31", `{"schedule":{"kind":"cron","expr":"0 9 31 2 *"},"payload":{"kind":"systemEvent","text":"x"}}`, "never fires"},
		{"bad tz", `{"schedule":{"kind":"cron","expr":"0 9 * * *","tz":"Mars/Olympus"},"payload":{"kind":"systemEvent","text":"x"}}`, "unknown time zone"},
		{"sub-minute", `{"schedule":{"kind":"every","everyMs":59999},"payload":{"kind":"systemEvent","text":"x"}}`, "under one minute"},
		{"past at", `{"schedule":{"kind":"at","at":"2020-01-01T00:00:00Z"},"payload":{"kind":"systemEvent","text":"x"}}`, "in the past"},
		{"bad at", `{"schedule":{"kind":"at","at":"tomorrow"},"payload":{"kind":"systemEvent","text":"x"}}`, "not a time"},
		{"no kind", `{"schedule":{"expr":"0 9 * * *"},"payload":{"kind":"systemEvent","text":"x"}}`, "schedule.kind is required"},
		{"no text", `{"schedule":{"kind":"every","everyMs":60000},"payload":{"kind":"systemEvent"}}`, "needs text"},
		{"bad payload", `{"schedule":{"kind":"every","everyMs":60000},"payload":{"kind":"email","text":"x"}}`, "payload.kind"},
		{"bad target", `{"schedule":{"kind":"every","everyMs":60000},"payload":{"kind":"systemEvent","text":"x"},"sessionTarget":"other"}`, "sessionTarget"},
		{"channel without to", `{"schedule":{"kind":"every","everyMs":60000},"payload":{"kind":"systemEvent","text":"x"},"delivery":{"mode":"channel","channel":"telegram"}}`, "needs channel and to"},
		{"no schedule", `{"payload":{"kind":"systemEvent","text":"x"}}`, "schedule is required"},
	}
	for _, tt := range tests {
		var in JobInput
		if err := json.Unmarshal([]byte(tt.job), &in); err != nil {
			t.Fatal(err)
		}
		_, err := NewJob(in, "id", "main", "k", now)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestJobNextKinds(t *testing.T) {
	every := Job{CreatedAtMs: now.UnixMilli(), Schedule: Spec{Kind: "every", EveryMs: 3600000}}
	if got, _ := every.Next(now.Add(90 * time.Minute)); !got.Equal(now.Add(2 * time.Hour)) {
		t.Errorf("every: next = %v, want %v", got, now.Add(2*time.Hour))
	}
	at := Job{Schedule: Spec{Kind: "at", At: "2026-11-23T09:00", TZ: "Asia/Shanghai"}}
	want := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	if got, ok := at.Next(now); !ok || !got.Equal(want) {
		t.Errorf("at: next = %v %v, want %v", got, ok, want)
	}
	at.State.LastRunAtMs = want.UnixMilli()
	if _, ok := at.Next(now); ok {
		t.Error("at: a one-shot that ran has a next run")
	}
	j, err := NewJob(JobInput{Schedule: &at.Schedule, Payload: &Payload{Kind: "systemEvent", Text: "x"}}, "i", "main", "k", now)
	if err != nil || !j.DeleteAfterRun || j.SessionTarget != "main" || j.Delivery.Mode != "announce" || !j.Enabled {
		t.Errorf("at job defaults: %+v, %v", j, err)
	}
}
