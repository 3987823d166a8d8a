package cron

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/tools"
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
	every := Job{CreatedAtMs: now.UnixMilli(), Schedule: Schedule{Kind: "every", EveryMs: 3600000}}
	if got, _ := every.Next(now.Add(90 * time.Minute)); !got.Equal(now.Add(2 * time.Hour)) {
		t.Errorf("every: next = %v, want %v", got, now.Add(2*time.Hour))
	}
	at := Job{Schedule: Schedule{Kind: "at", At: "2026-11-23T09:00", TZ: "Asia/Shanghai"}}
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

type fakeRuntime struct{ action, agent, session string }

func (f *fakeRuntime) Message(context.Context, string, string) error { return nil }

func (f *fakeRuntime) Cron(_ context.Context, agentID, sessionKey, action string, _ json.RawMessage) (json.RawMessage, error) {
	f.action, f.agent, f.session = action, agentID, sessionKey
	return json.RawMessage(`{"ok":true}`), nil
}

func TestToolOwnerOnlyAndActions(t *testing.T) {
	rt := &fakeRuntime{}
	env := tools.Env{AgentID: "main", SessionKey: "s", Runtime: rt}
	res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(`{"action":"list"}`), Env: env})
	if !res.IsError || !strings.Contains(res.Content, "owner-only") || rt.action != "" {
		t.Errorf("non-owner: %+v (runtime called with %q)", res, rt.action)
	}
	env.Owner = true
	for _, bad := range []string{`{"action":"explode"}`, `{"action":"list","extra":1}`, `not json`} {
		if res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(bad), Env: env}); !res.IsError {
			t.Errorf("%s accepted: %+v", bad, res)
		}
	}
	res = tools.Run(context.Background(), New(), tools.Call{Args: []byte(`{"action":"list"}`), Env: env})
	if res.IsError || rt.action != "list" || rt.agent != "main" || rt.session != "s" {
		t.Errorf("owner list: %+v, runtime saw %+v", res, rt)
	}
	env.Runtime = nil
	if res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(`{"action":"list"}`), Env: env}); !res.IsError {
		t.Error("no runtime: accepted")
	}
	var spec map[string]any
	if err := json.Unmarshal(New().Spec().Parameters, &spec); err != nil {
		t.Errorf("schema is not JSON: %v", err)
	}
}
