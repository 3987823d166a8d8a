package configs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// twoBots is a configuration with two Telegram bots, a Discord bot and two agents.
const twoBots = `
agents:
  - id: main
  - id: work
channels:
  telegram:
    apiRoot: http://127.0.0.1:1
    allowFrom: ["42"]
    accounts:
      home:
        botToken: "111:home"
      office:
        botToken: "222:office"
        allowFrom: ["7"]
  discord:
    token: dtok
`

func TestAccountsInherit(t *testing.T) {
	c, err := Load(writeConfig(t, t.TempDir(), twoBots), envOf(map[string]string{"OPENAI_API_KEY": "sk-x"}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var got []string
	for _, a := range c.Channels.Accounts() {
		line := a.Path + " " + a.Name()
		if a.Telegram != nil {
			line += " " + a.Telegram.BotToken + " " + a.Telegram.APIRoot + " " + strings.Join(a.Telegram.AllowFrom, ",") + " " + a.Telegram.Mode
		}
		got = append(got, line)
	}
	want := []string{
		// the block has no token of its own: only its accounts run
		"channels.telegram.accounts.home home 111:home http://127.0.0.1:1 42 polling",
		"channels.telegram.accounts.office office 222:office http://127.0.0.1:1 7 polling",
		"channels.discord default",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Accounts() (-want +got):\n%s", diff)
	}
	for _, tok := range []string{"111:home", "222:office"} {
		if !strings.Contains(strings.Join(c.Secrets(), " "), tok) {
			t.Errorf("Secrets() lacks the account token %q", tok)
		}
	}
}

func TestBindingsValidate(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each must appear in the error; none: valid
	}{
		{"fine", `bindings:
  - {agentId: work, match: {channel: telegram, accountId: office}}
  - {agentId: main, match: {channel: telegram, accountId: home}}
  - {agentId: work, match: {channel: discord, peer: {kind: channel, id: "123"}}}
  - {agentId: main, match: {channel: terminal}}`, nil},
		{"unknown agent", `bindings:
  - {agentId: wrok, match: {channel: telegram}}`, []string{`bindings[0].agentId: "wrok" is not an agent (did you mean "work"?)`}},
		{"unknown account", `bindings:
  - {agentId: work, match: {channel: telegram, accountId: ofice}}`, []string{`bindings[0].match.accountId: "ofice" is not an account of channels.telegram, so this binding can never match (did you mean "office"?)`}},
		{"default account does not run", `bindings:
  - {agentId: work, match: {channel: telegram, accountId: default}}`, []string{`bindings[0].match.accountId: "default" is not an account`}},
		{"channel not configured", `bindings:
  - {agentId: work, match: {channel: feishu}}`, []string{"bindings[0].match.channel: feishu is not configured, so this binding can never match"}},
		{"no channel", `bindings:
  - {agentId: work, match: {accountId: home}}`, []string{"bindings[0].match.channel: required"}},
		{"misspelt channel", `bindings:
  - {agentId: work, match: {channel: telegarm}}`, []string{`bindings[0].match.channel: "telegarm" is not a channel (did you mean "telegram"?)`}},
		{"shadowed", `bindings:
  - {agentId: work, match: {channel: discord, peer: {kind: group, id: "1"}}}
  - {agentId: main, match: {channel: discord, peer: {kind: channel, id: "1"}}}`, []string{"bindings[1].match: the same as bindings[0].match, which comes first: this binding can never match"}},
		{"bad peer", `bindings:
  - {agentId: work, match: {channel: discord, peer: {kind: dm}}}`, []string{`bindings[0].match.peer.kind: "dm" is not valid`, "bindings[0].match.peer.id: required"}},
		{"terminal has no accounts", `bindings:
  - {agentId: work, match: {channel: terminal, accountId: home}}`, []string{"bindings[0].match.accountId: the terminal has no accounts"}},
		{"same bot twice", `channels:
  telegram:
    accounts:
      again: {botToken: "111:home"}`, []string{"channels.telegram.accounts.home.botToken: the same bot as channels.telegram.accounts.again"}},
		{"account named default", `channels:
  telegram:
    accounts:
      default: {botToken: "333:x"}`, []string{`channels.telegram.accounts.default: "default" names the account of channels.telegram's own keys`}},
		{"account without token", `channels:
  telegram:
    accounts:
      third: {}`, []string{"channels.telegram.accounts.third.botToken: empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := twoBots + tt.yaml
			if more, ok := strings.CutPrefix(tt.yaml, "channels:\n  telegram:\n    accounts:\n"); ok {
				body = strings.Replace(twoBots, "    accounts:\n", "    accounts:\n"+more+"\n", 1) // more telegram accounts
			}
			_, err := Load(writeConfig(t, t.TempDir(), body), envOf(map[string]string{"OPENAI_API_KEY": "sk-x"}))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load accepted it; want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

func TestBindingUnknownKey(t *testing.T) {
	_, err := Load(writeConfig(t, t.TempDir(), twoBots+`bindings:
  - agentId: work
    match: {channel: telegram, acountId: home}
`), envOf(map[string]string{"OPENAI_API_KEY": "sk-x"}))
	if err == nil || !strings.Contains(err.Error(), `unknown key "acountId" in bindings[0].match (did you mean "accountId"?)`) {
		t.Errorf("Load: %v, want the unknown key with a did-you-mean", err)
	}
	_, err = Load(writeConfig(t, t.TempDir(), strings.Replace(twoBots, `botToken: "111:home"`, `botToken: "111:home"
        alowFrom: ["1"]`, 1)), envOf(map[string]string{"OPENAI_API_KEY": "sk-x"}))
	if err == nil || !strings.Contains(err.Error(), `unknown key "alowFrom" in channels.telegram.accounts.home (did you mean "allowFrom"?)`) {
		t.Errorf("Load: %v, want the unknown key in the account with a did-you-mean", err)
	}
}

func TestAccountsDiscordFeishu(t *testing.T) {
	c, err := Load(writeConfig(t, t.TempDir(), `
channels:
  discord:
    token: d0
    groups: ["c1"]
    accounts:
      second: {token: d2}
  feishu:
    mode: webhook
    encryptKey: k
    accounts:
      intl: {appId: cli_2, appSecret: s2, domain: lark, webhookListen: "127.0.0.1:9001", encryptKey: k2}
`), envOf(map[string]string{"OPENAI_API_KEY": "sk-x"}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var got []string
	for _, a := range c.Channels.Accounts() {
		switch {
		case a.Discord != nil:
			got = append(got, a.Path+" "+a.Discord.Token+" "+strings.Join(a.Discord.Groups, ","))
		case a.Feishu != nil:
			got = append(got, a.Path+" "+a.Feishu.AppID+" "+a.Feishu.Mode+" "+a.Feishu.WebhookListen+" "+a.Feishu.WebhookPath)
		}
	}
	want := []string{
		"channels.discord d0 c1",
		"channels.discord.accounts.second d2 c1",
		// the feishu block has no app of its own: only its account runs, in the block's mode
		"channels.feishu.accounts.intl cli_2 webhook 127.0.0.1:9001 /feishu/events",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Accounts() (-want +got):\n%s", diff)
	}
}
