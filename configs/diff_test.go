package configs

import (
	"slices"
	"testing"
)

func TestDiffNamesLiveAndRestartChanges(t *testing.T) {
	env := envOf(map[string]string{"OPENAI_API_KEY": "sk-x", "HOME": "/home/u", "REEF_HOME": "/home/u/.reef",
		"TG1": "111:aaa", "TG2": "222:bbb"})
	load := func(body string) *Config {
		t.Helper()
		c, err := Load(writeConfig(t, t.TempDir(), body), env)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old := load(`
providers: {openai: {apiKey: "${OPENAI_API_KEY}"}}
agents: [{id: main, model: openai/gpt-4.1-mini}]
channels:
  telegram:
    botToken: ${TG1}
    allowFrom: ["1"]
gateway: {http: {listen: "127.0.0.1:7070"}}
`)
	next := load(`
providers: {openai: {apiKey: "${OPENAI_API_KEY}"}}
agents: [{id: main, model: openai/gpt-4.1}, {id: helper, model: openai/gpt-4.1-mini}]
channels:
  telegram:
    botToken: ${TG1}
    allowFrom: ["1", "2"]
    streaming: {mode: progress}
    accounts:
      work: {botToken: "${TG2}"}
tools: {exec: {approvals: always, background: {maxRunning: 3}}}
gateway: {http: {listen: "127.0.0.1:7071"}}
dataDir: /tmp/elsewhere
`)
	var got []string
	for _, c := range Diff(old, next) {
		got = append(got, c.String())
	}
	want := []string{
		"agents.helper added",
		"agents.main changed",
		"channels.telegram changed",
		"channels.telegram.accounts.work added",
		"tools.exec.approvals changed",
		"dataDir changed (needs a restart)",
		"gateway changed (needs a restart)",
		"tools.exec.background changed (needs a restart)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Diff:\n got %q\nwant %q", got, want)
	}
	if d := Diff(old, old); len(d) != 0 {
		t.Errorf("a config against itself: %v", d)
	}

	// The default account only changed its access and streaming: same connection.
	oa, na := old.Channels.Accounts()[0], next.Channels.Accounts()[0]
	if !SameConnection(oa, na) {
		t.Error("access and streaming changes count as a new connection")
	}
	na.Telegram.BotToken = "333:ccc"
	if SameConnection(oa, na) {
		t.Error("a new token keeps the connection")
	}
}
