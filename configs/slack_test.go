package configs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSlackFromEnvironment(t *testing.T) {
	c := &Config{}
	ApplyDefaults(c, envOf(map[string]string{"OPENAI_API_KEY": "sk-x", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}))
	s := c.Channels.Slack
	if s == nil || s.BotToken != "xoxb-1" || s.AppToken != "xapp-1" || s.Mode != "socket" {
		t.Fatalf("slack = %+v, want both tokens in socket mode", s)
	}
	for _, want := range []string{"xoxb-1", "xapp-1"} {
		if !slices.Contains(c.Secrets(), want) {
			t.Errorf("Secrets() lacks %q", want)
		}
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestSlackAccountsAndValidation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reef.yaml")
	yaml := `
providers:
  openai: {type: openai, apiKey: sk-x}
agents: [{id: main, model: openai/gpt-4o}]
channels:
  slack:
    botToken: ${SLACK_BOT_TOKEN}
    appToken: ${SLACK_APP_TOKEN}
    allowFrom: [U1]
    accounts:
      work:
        botToken: xoxb-work
        appToken: xapp-work
      hooks:
        botToken: xoxb-hooks
        mode: events
        signingSecret: s3cret
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, envOf(map[string]string{"SLACK_BOT_TOKEN": "xoxb-main", "SLACK_APP_TOKEN": "xapp-main"}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range c.Channels.Accounts() {
		if a.Slack != nil {
			got = append(got, a.Path+" "+a.Slack.BotToken+" "+a.Slack.Mode+" "+a.Slack.EventsPath+" "+strings.Join(a.Slack.AllowFrom, ","))
		}
	}
	// Each account's events come to a path of its own on the web listener.
	want := []string{"channels.slack xoxb-main socket /slack/events U1", "channels.slack.accounts.hooks xoxb-hooks events /slack/events/hooks U1",
		"channels.slack.accounts.work xoxb-work socket /slack/events/work U1"}
	if !slices.Equal(got, want) {
		t.Errorf("accounts = %q, want %q", got, want)
	}
	for _, s := range []string{"xoxb-main", "xapp-work", "s3cret"} {
		if !slices.Contains(c.Secrets(), s) {
			t.Errorf("Secrets() lacks %q", s)
		}
	}
}

func TestSlackValidate(t *testing.T) {
	cases := []struct {
		name string
		s    SlackConfig
		want string
	}{
		{"no bot token", SlackConfig{AppToken: "xapp-1"}, "SLACK_BOT_TOKEN"},
		{"user token", SlackConfig{BotToken: "xoxp-1", AppToken: "xapp-1"}, "xoxb-"},
		{"socket without app token", SlackConfig{BotToken: "xoxb-1"}, "SLACK_APP_TOKEN"},
		{"events unsigned", SlackConfig{BotToken: "xoxb-1", Mode: "events"}, "signingSecret"},
		{"bad mode", SlackConfig{BotToken: "xoxb-1", AppToken: "xapp-1", Mode: "rtm"}, "channels.slack.mode"},
		{"fine events", SlackConfig{BotToken: "xoxb-1", Mode: "events", SigningSecret: "x"}, ""},
		{"events without a listener", SlackConfig{BotToken: "xoxb-1", Mode: "events", SigningSecret: "x"}, "eventsListen"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Channels: ChannelsConfig{Slack: &tc.s}}
			if tc.name == "events without a listener" {
				c.Gateway.HTTP.Listen = "off"
			}
			ApplyDefaults(c, envOf(map[string]string{"OPENAI_API_KEY": "sk-x"}))
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
