package configs

import (
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/streaming"
)

func TestStreamingSettings(t *testing.T) {
	c := loadYAML(t, `
channels:
  telegram:
    botToken: "123456:AAHfakeTokenForReefTestsOnly_abcdef"
    streaming:
      mode: block
      progress: {label: false, maxLines: 4, startDelayMs: 0, toolProgress: false}
      block: {minChars: 300}
    accounts:
      work:
        botToken: "654321:AAHfakeTokenForReefTestsOnly_abcdef"
      chatty:
        botToken: "654322:AAHfakeTokenForReefTestsOnly_abcdef"
        streaming: {mode: partial, progress: {label: "Cooking"}}
  discord:
    token: "x"
`)
	got := map[string]streaming.Settings{}
	for _, a := range c.Channels.Accounts() {
		got[a.Channel+":"+a.Name()] = a.Streaming()
	}
	if s := got["telegram:default"]; s.Mode != streaming.Block || s.Label != "" || s.MaxLines != 4 ||
		s.StartDelay != 0 || s.ToolProgress || s.BlockMinChars != 300 || s.MaxLineChars != 120 {
		t.Errorf("telegram default = %+v", s)
	}
	if s := got["telegram:work"]; s.Mode != streaming.Block || s.BlockMinChars != 300 {
		t.Errorf("an account without its own streaming block takes the platform's; got %+v", s)
	}
	if s := got["telegram:chatty"]; s.Mode != streaming.Partial || s.Label != "Cooking" || s.StartDelay != 500*time.Millisecond {
		t.Errorf("telegram chatty = %+v", s)
	}
	if s := got["discord:default"]; s.Mode != streaming.Progress || s.Label != streaming.LabelAuto || s.MaxLines != 8 || !s.ToolProgress {
		t.Errorf("discord (defaults) = %+v", s)
	}
}

func TestStreamingValidation(t *testing.T) {
	for name, tt := range map[string]struct{ block, want string }{
		"mode":       {`{mode: fast}`, "channels.telegram.streaming.mode"},
		"label true": {`{progress: {label: true}}`, "label: true is not a label"},
		"delay":      {`{progress: {startDelayMs: -5}}`, "streaming.progress.startDelayMs"},
		"lines":      {`{progress: {maxLines: 500}}`, "streaming.progress.maxLines"},
		"line chars": {`{progress: {maxLineChars: 3}}`, "streaming.progress.maxLineChars"},
		"min chars":  {`{block: {minChars: -1}}`, "streaming.block.minChars"},
		"empty word": {`{progress: {labels: ["ok", " "]}}`, "streaming.progress.labels[1]"},
		"unknown":    {`{progres: {}}`, "progres"},
	} {
		t.Run(name, func(t *testing.T) {
			err := loadYAMLErr(t, `
channels:
  telegram:
    botToken: "123456:AAHfakeTokenForReefTestsOnly_abcdef"
    streaming: `+tt.block+`
`)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func loadYAMLErr(t *testing.T, body string) error {
	t.Helper()
	home := t.TempDir()
	_, err := Load(writeConfig(t, home, body), envOf(map[string]string{"OPENAI_API_KEY": "sk-test", "REEF_HOME": home}))
	return err
}

func loadYAML(t *testing.T, body string) *Config {
	t.Helper()
	home := t.TempDir()
	c, err := Load(writeConfig(t, home, body), envOf(map[string]string{"OPENAI_API_KEY": "sk-test", "REEF_HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
