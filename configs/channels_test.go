package configs

import (
	"slices"
	"strings"
	"testing"
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
