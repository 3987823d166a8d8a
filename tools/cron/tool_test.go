package cron

import (
	"context"
	"encoding/json"
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
