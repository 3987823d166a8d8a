package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
)

// TestExecBackgroundLimitFromConfig: tools.exec.background.maxRunning reaches the exec tool;
// a start past it fails with an error naming the key and its value, and the other
// conversation still may start one.
func TestExecBackgroundLimitFromConfig(t *testing.T) {
	c := &configs.Config{Providers: map[string]configs.ProviderConfig{"local": {Type: "openai", BaseURL: "http://127.0.0.1:9/v1"}},
		Agents: []configs.AgentConfig{{ID: "main", Model: "local/m"}}}
	c.Tools.Exec.Background = configs.ExecBackgroundConfig{MaxRunning: 1, MaxTotal: 3, OutputBytes: 4096}
	c.Tools.Exec.Sandbox = "off"
	configs.ApplyDefaults(c, func(k string) string {
		if k == "REEF_HOME" {
			return t.TempDir()
		}
		return ""
	})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	pc := processConfig(c)
	if pc.MaxRunning != 1 || pc.MaxTotal != 3 || pc.MaxKept != 16 || pc.KeepFinished != time.Hour || pc.OutputBytes != 4096 {
		t.Fatalf("processConfig: %+v", pc)
	}
	procs := exec.NewProcesses(pc)
	t.Cleanup(func() {
		if err := procs.Close(30 * time.Second); err != nil {
			t.Error(err)
		}
	})
	var ex tools.Tool
	for _, tl := range newTools(c, nil, procs) {
		if tl.Spec().Name == "exec" {
			ex = tl
		}
	}
	ws := t.TempDir()
	run := func(session string) tools.Result {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return tools.Run(ctx, ex, tools.Call{ID: "c", Args: []byte(`{"command":"exec sleep 30","background":true}`),
			Env: tools.Env{Workspace: ws, SessionKey: session}})
	}
	if res := run("s1"); res.IsError {
		t.Fatalf("first: %s", res.Content)
	}
	if res := run("s1"); !res.IsError || !strings.Contains(res.Content, "tools.exec.background.maxRunning: 1") {
		t.Errorf("second in one conversation: got %+v, want an error naming tools.exec.background.maxRunning: 1", res)
	}
	if res := run("s2"); res.IsError {
		t.Errorf("another conversation: %s", res.Content)
	}
}
