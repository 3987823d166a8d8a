package configs

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChannelsFromEnvironment(t *testing.T) {
	c := &Config{}
	ApplyDefaults(c, envOf(map[string]string{"OPENAI_API_KEY": "sk-x",
		"TELEGRAM_BOT_TOKEN": "123:tok", "DISCORD_BOT_TOKEN": "dtok", "FEISHU_APP_ID": "cli_1", "FEISHU_APP_SECRET": "fsec"}))
	ch := c.Channels
	if ch.Telegram == nil || ch.Telegram.BotToken != "123:tok" || ch.Telegram.Mode != "polling" {
		t.Errorf("telegram = %+v", ch.Telegram)
	}
	if ch.Discord == nil || ch.Discord.Token != "dtok" {
		t.Errorf("discord = %+v", ch.Discord)
	}
	if ch.Feishu == nil || ch.Feishu.Domain != "feishu" || ch.Feishu.Mode != "websocket" {
		t.Errorf("feishu = %+v", ch.Feishu)
	}
	if a := ch.Telegram.Access(); a.DMPolicy != "pairing" || !a.RequireMention {
		t.Errorf("default access = %+v, want pairing with mentions required", a)
	}
	for _, s := range []string{"123:tok", "dtok", "fsec"} {
		if !slices.Contains(c.Secrets(), s) {
			t.Errorf("Secrets() lacks %q", s)
		}
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestChannelsValidate(t *testing.T) {
	f := false
	cases := []struct {
		name string
		ch   ChannelsConfig
		want string
	}{
		{"open needs star", ChannelsConfig{Telegram: &TelegramConfig{BotToken: "1:x", DMPolicy: "open"}}, `allowFrom: ["*"]`},
		{"bad policy", ChannelsConfig{Discord: &DiscordConfig{Token: "x", DMPolicy: "everyone"}}, "channels.discord.dmPolicy"},
		{"webhook needs secret", ChannelsConfig{Telegram: &TelegramConfig{BotToken: "1:x", Mode: "webhook", WebhookURL: "https://a"}}, "webhookSecret"},
		{"no token", ChannelsConfig{Telegram: &TelegramConfig{}}, "TELEGRAM_BOT_TOKEN"},
		{"feishu webhook unsigned", ChannelsConfig{Feishu: &FeishuConfig{AppID: "a", AppSecret: "b", Mode: "webhook"}}, "verificationToken"},
		{"feishu bad domain", ChannelsConfig{Feishu: &FeishuConfig{AppID: "a", AppSecret: "b", Domain: "larksuite"}}, "channels.feishu.domain"},
		{"fine", ChannelsConfig{Discord: &DiscordConfig{Token: "x", DMPolicy: "open", AllowFrom: []string{"*"}, RequireMention: &f}}, ""},
		{"discord shards not a number", ChannelsConfig{Discord: &DiscordConfig{Token: "x", Shards: "many"}}, "channels.discord.shards"},
		{"discord zero shards", ChannelsConfig{Discord: &DiscordConfig{Token: "x", Shards: "0"}}, "channels.discord.shards"},
		{"discord shards auto", ChannelsConfig{Discord: &DiscordConfig{Token: "x", Shards: "auto"}}, ""},
		{"discord shards fixed", ChannelsConfig{Discord: &DiscordConfig{Token: "x", Shards: "4"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Channels: tc.ch}
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

// TestGuestToolKeys: the tool grants of every platform load (strict keys) and reach Access().
func TestGuestToolKeys(t *testing.T) {
	grants := `
    tools: {allow: [web_fetch], deny: [read]}
    groupTools:
      "-100": {allow: [ls], deny: [message], bySender: {"42": {allow: [exec]}}}
    toolsBySender:
      "7": {allow: ["group:fs"]}
`
	body := "providers:\n  openai:\n    apiKey: k\nchannels:\n" +
		"  telegram:\n    botToken: \"1:t\"" + grants +
		"  discord:\n    token: d" + grants +
		"  feishu:\n    appId: a\n    appSecret: s" + grants
	c, err := Load(writeConfig(t, t.TempDir(), body), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := GuestTools{
		Tools:         ToolPolicy{Allow: []string{"web_fetch"}, Deny: []string{"read"}},
		GroupTools:    map[string]GroupToolPolicy{"-100": {Allow: []string{"ls"}, Deny: []string{"message"}, BySender: map[string]ToolPolicy{"42": {Allow: []string{"exec"}}}}},
		ToolsBySender: map[string]ToolPolicy{"7": {Allow: []string{"group:fs"}}},
	}
	for name, a := range map[string]AccessConfig{"telegram": c.Channels.Telegram.Access(), "discord": c.Channels.Discord.Access(), "feishu": c.Channels.Feishu.Access()} {
		if diff := cmp.Diff(want, a.Guests); diff != "" {
			t.Errorf("%s guests (-want +got):\n%s", name, diff)
		}
	}
	_, err = Load(writeConfig(t, t.TempDir(), "providers:\n  openai:\n    apiKey: k\nchannels:\n  telegram:\n    botToken: \"1:t\"\n    groupTools:\n      g: {alow: [exec]}\n"), envOf(nil))
	if err == nil || !strings.Contains(err.Error(), "alow") {
		t.Errorf("a misspelt key: %v, want an error naming it", err)
	}
}
