package main

import (
	"context"
	"strings"
	"testing"

	"github.com/reefgw/reef/configs"
)

// TestConfigPageShowsEffectiveValues: the Config page shows what reef uses (the queue mode,
// its cap, sub-agent limits...), not the zero values of a file that left them out, and
// leaves the loaded configuration untouched.
func TestConfigPageShowsEffectiveValues(t *testing.T) {
	c := &configs.Config{}
	home := t.TempDir()
	configs.ApplyDefaults(c, func(k string) string { return map[string]string{"REEF_HOME": home, "HOME": home}[k] })
	v, err := (&webBackend{cfg: c, configPath: "/nowhere/reef.yaml"}).Config(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mode: steer", "cap: 20", "debounceMs: 500", "drop: summarize", "greetOnNew: true",
		"maxChildren: 5", "memoryFlush: true", "maxJobsPerAgent: 200", "maxConcurrentRuns: 4"} {
		if !strings.Contains(v.YAML, want) {
			t.Errorf("the Config page lacks %q:\n%s", want, v.YAML)
		}
	}
	if c.Session.Queue.Mode != "" || c.Agents[0].Subagents.MaxChildren != 0 || c.Session.GreetOnNew != nil {
		t.Errorf("the page changed the loaded configuration: %+v", c.Session)
	}
}
