package cron

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reefgw/reef/tools"
)

type fakeRuntime struct{ action, agent, session string }

func (f *fakeRuntime) Message(context.Context, string, string) error { return nil }

func (f *fakeRuntime) Cron(_ context.Context, agentID, sessionKey, action string, _ json.RawMessage) (json.RawMessage, error) {
	f.action, f.agent, f.session = action, agentID, sessionKey
	return json.RawMessage(`{"ok":true}`), nil
}

// TestToolActions: who may call cron is the tool policy's business (tools.OwnerTools); the
// tool checks its arguments and hands the action to the runtime.
func TestToolActions(t *testing.T) {
	rt := &fakeRuntime{}
	env := tools.Env{AgentID: "main", SessionKey: "s", Runtime: rt}
	if !tools.IsOwnerTool("cron") {
		t.Error("cron is not one of tools.OwnerTools: guests would be offered it")
	}
	for _, bad := range []string{`{"action":"explode"}`, `{"action":"list","extra":1}`, `not json`} {
		if res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(bad), Env: env}); !res.IsError {
			t.Errorf("%s accepted: %+v", bad, res)
		}
	}
	res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(`{"action":"list"}`), Env: env})
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

// TestDeliveryFollowsTheMessageTargetRule: a run without sessions_send (a guest granted only
// cron) cannot make or change a job that delivers to another chat; announce (its own
// conversation) works; a run with sessions_send may (#39 item 10).
func TestDeliveryFollowsTheMessageTargetRule(t *testing.T) {
	rt := &fakeRuntime{}
	env := tools.Env{AgentID: "main", SessionKey: "agent:main:telegram:direct:7", Runtime: rt, Tools: []string{"cron", "read"}}
	job := `{"name":"x","schedule":{"kind":"every","everyMs":3600000},"payload":{"kind":"systemEvent","text":"hi"},"delivery":{"mode":"%s","channel":"telegram","to":"500"}}`
	for _, args := range []string{
		`{"action":"add","job":` + fmt.Sprintf(job, "channel") + `}`,
		`{"action":"update","id":"j1","patch":{"delivery":{"mode":"channel","channel":"telegram","to":"500"}}}`,
	} {
		rt.action = ""
		res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(args), Env: env})
		if !res.IsError || !strings.Contains(res.Content, "sessions_send") || rt.action != "" {
			t.Errorf("guest %s: %+v, runtime saw %q", args, res, rt.action)
		}
	}
	if res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(`{"action":"add","job":` + fmt.Sprintf(job, "announce") + `}`), Env: env}); res.IsError {
		t.Errorf("announce refused: %+v", res)
	}
	env.Tools = append(env.Tools, "sessions_send")
	if res := tools.Run(context.Background(), New(), tools.Call{Args: []byte(`{"action":"add","job":` + fmt.Sprintf(job, "channel") + `}`), Env: env}); res.IsError || rt.action != "add" {
		t.Errorf("a run with sessions_send: %+v", res)
	}
}
